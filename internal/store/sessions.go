package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// Session is a chat session of an agent, optionally with a user.
type Session struct {
	ID        string         `json:"id"`
	AgentID   string         `json:"agent_id"`
	UserID    string         `json:"user_id,omitempty"`
	Situation string         `json:"situation,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

func (x *Session) normalize()                { x.Metadata = normMap(x.Metadata) }
func (x *Session) metadata() *map[string]any { return &x.Metadata }
func (x *Session) stamp(c, u time.Time)      { x.CreatedAt, x.UpdatedAt = c, u }
func (x *Session) createdAt() time.Time      { return x.CreatedAt }
func sessionKey(dev, id string) itemKey      { return ownerItem(dev, Owner{OwnerSession, id}) }

// CreateSession stores a session, with a new id or the one x has (a session of that id already
// is a Conflict); its agent (and user, when given) must exist.
func (s *Store) CreateSession(ctx context.Context, dev string, x Session) (*Session, error) {
	if err := checkIDs(dev, "agent_id", x.AgentID); err != nil {
		return nil, err
	}
	if x.UserID != "" {
		if err := checkID("user_id", x.UserID); err != nil {
			return nil, err
		}
	}
	if err := givenID(&x.ID, "session_id"); err != nil {
		return nil, err
	}
	return createRecord(ctx, s, dev, &x, sessionKey(dev, x.ID), "session", OwnerSession, func(*Session) ([]txOp, map[string]types.AttributeValue, error) {
		ops := []txOp{
			{condLive(s, agentKey(dev, x.AgentID)), notFound("agent", x.AgentID)},
			refPut(s, refKey(dev, x.AgentID, OwnerSession, x.ID), OwnerSession, x.ID),
		}
		if x.UserID != "" {
			ops = append(ops, txOp{condLive(s, userKey(dev, x.UserID)), notFound("user", x.UserID)})
		}
		return ops, nil, nil
	})
}

// GetSession reads a session.
func (s *Store) GetSession(ctx context.Context, dev, id string) (*Session, error) {
	if err := checkIDs(dev, "session_id", id); err != nil {
		return nil, err
	}
	o, err := readRecord[Session](ctx, s, sessionKey(dev, id), "session", id)
	if err != nil {
		return nil, err
	}
	return o.rec, nil
}

// ListSessions lists the developer's sessions, newest first.
func (s *Store) ListSessions(ctx context.Context, dev string, p Page) (*List[Session], error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	return listRecords[Session](ctx, s, liveQuery(devPK(dev), "SESSION#"), p, "sessions")
}

// UpdateSession applies mutate to a session; its id and agent stay. A new user must exist.
func (s *Store) UpdateSession(ctx context.Context, dev, id string, mutate func(*Session) error) (*Session, error) {
	if err := checkIDs(dev, "session_id", id); err != nil {
		return nil, err
	}
	return updateRecord(ctx, s, dev, sessionKey(dev, id), "session", id, OwnerSession, func(x *Session) error {
		agent := x.AgentID
		if err := mutate(x); err != nil {
			return err
		}
		x.ID, x.AgentID = id, agent
		if x.UserID != "" {
			return checkID("user_id", x.UserID)
		}
		return nil
	}, func(old, x *Session) ([]txOp, map[string]types.AttributeValue, error) {
		if x.UserID == "" || x.UserID == old.UserID {
			return nil, nil, nil
		}
		return []txOp{{condLive(s, userKey(dev, x.UserID)), notFound("user", x.UserID)}}, nil, nil
	})
}

// DeleteSession deletes a session and its messages.
func (s *Store) DeleteSession(ctx context.Context, dev, id string) error {
	if err := checkIDs(dev, "session_id", id); err != nil {
		return err
	}
	return s.deleteOwner(ctx, dev, Owner{OwnerSession, id})
}

// Message is one message of a session's history.
type Message struct {
	ID         string    `json:"id"`
	Role       string    `json:"role"`
	Content    any       `json:"content"`
	Name       string    `json:"name,omitempty"`
	ToolCallID string    `json:"tool_call_id,omitempty"`
	ToolCalls  any       `json:"tool_calls,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// Message size limits: a message is one DynamoDB item (at most 400 KB, its keys and attributes
// included) and an append one transaction (at most 4 MB).
const (
	// MaxMessageBytes is the most a message may take as JSON.
	MaxMessageBytes = 384 << 10
	// MaxAppendBytes is the most the messages of one append may take as JSON together.
	MaxAppendBytes = 3 << 20
)

// MessageBytes is the size of m's JSON, as the history keeps it.
func MessageBytes(m Message) int {
	b, err := jsonv.Encode(m)
	if err != nil {
		return 0
	}
	return len(b)
}

// checkMessages refuses, before anything is written, a message over MaxMessageBytes or an append
// over MaxAppendBytes, naming the limit (the callers batch by these).
func checkMessages(msgs []Message) error {
	total := 0
	for i, m := range msgs {
		n := MessageBytes(m)
		if n > MaxMessageBytes {
			return &fault.Error{Kind: fault.TooLarge, Field: "messages[" + strconv.Itoa(i) + "]",
				Msg: fmt.Sprintf("messages[%d] is %d bytes as JSON; a session's history keeps a message of at most %d bytes", i, n, MaxMessageBytes)}
		}
		total += n
	}
	if total > MaxAppendBytes {
		return &fault.Error{Kind: fault.TooLarge, Field: "messages",
			Msg: fmt.Sprintf("the messages are %d bytes as JSON together; append at most %d bytes at once", total, MaxAppendBytes)}
	}
	return nil
}

var roles = map[string]bool{"system": true, "user": true, "assistant": true, "tool": true, "developer": true}

// AppendMessages adds messages to a session's history, all or none, in order (each gets a new
// UUIDv7 id, so the history sorts by it). At most 99 at once; the session must exist.
func (s *Store) AppendMessages(ctx context.Context, dev, sessionID string, msgs []Message) ([]Message, error) {
	if err := checkIDs(dev, "session_id", sessionID); err != nil {
		return nil, err
	}
	if len(msgs) == 0 || len(msgs) > 99 {
		return nil, fault.Invalid("messages", "give 1 to 99 messages")
	}
	if err := checkMessages(msgs); err != nil {
		return nil, err
	}
	puts, out, err := s.messageOps(dev, sessionID, msgs)
	if err != nil {
		return nil, err
	}
	ops := append([]txOp{{condLive(s, sessionKey(dev, sessionID)), notFound("session", sessionID)}}, puts...)
	if err := s.transact(ctx, ops, "append messages"); err != nil {
		return nil, err
	}
	return out, nil
}

// messageOps are the puts appending msgs to a session's history, in order, and the messages as
// written (each with a new UUIDv7 id, so the history sorts by it).
func (s *Store) messageOps(dev, sessionID string, msgs []Message) ([]txOp, []Message, error) {
	pk := ownerPK(dev, Owner{OwnerSession, sessionID})
	now := s.clock()
	ops := make([]txOp, 0, len(msgs))
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		if !roles[m.Role] {
			return nil, nil, fault.Invalid("messages["+strconv.Itoa(i)+"].role", "role must be system, user, assistant, tool or developer")
		}
		m.ID, m.CreatedAt = newID(), now
		d, err := encodeDoc(m)
		if err != nil {
			return nil, nil, err
		}
		item := itemKey{pk, "MSG#" + m.ID}.av()
		item[attrDoc], item[attrKind] = d, str("message")
		ops = append(ops, txOp{item: types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: item}}})
		out[i] = m
	}
	return ops, out, nil
}

// ListMessages lists a session's history, oldest first.
func (s *Store) ListMessages(ctx context.Context, dev, sessionID string, p Page) (*List[Message], error) {
	if err := checkIDs(dev, "session_id", sessionID); err != nil {
		return nil, err
	}
	if err := s.checkLive(ctx, dev, Owner{OwnerSession, sessionID}); err != nil {
		return nil, err
	}
	return listPage(ctx, s, pageQuery{part: ownerPK(dev, Owner{OwnerSession, sessionID}), prefix: "MSG#", forward: true}, p, "messages", decodeMessage)
}

func decodeMessage(it map[string]types.AttributeValue) (*Message, error) {
	var m Message
	if err := decodeDoc(it, &m); err != nil {
		return nil, err
	}
	m.Content, m.ToolCalls = normAny(m.Content), normAny(m.ToolCalls)
	return &m, nil
}
