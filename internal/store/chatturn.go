package store

import (
	"context"
	"slices"
	"strings"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/tool"
)

// A session's chat turns run one at a time: a chat claims the session's turn before it reads the
// history, and gives it back with its last write. The claim, and the mark a turn leaves while its
// step's tools run (open), are native attributes of the session's own item: the claim's one
// UpdateItem reads the session too, and a turn's writes change them in the transaction that
// appends its messages. A session's update carries them over (keptAttrs).

const (
	attrTurn      = "chat_turn"  // S: the token of the chat holding the session's turn
	attrTurnUntil = "chat_until" // N: Unix ms until which the claim holds
	attrTurnKey   = "chat_key"   // S: the holder's Idempotency-Key record, when it has one
	attrTurnOpen  = "chat_open"  // S: the turn whose step's tools ran and that has not ended
)

// TurnClaim is a chat's claim on a session's turn: its token, how long it holds (a process that
// dies leaves it to lapse), and the chat's Idempotency-Key record ("" without one).
type TurnClaim struct {
	Token   string
	TTL     time.Duration
	IdemKey string
}

// SessionTurn is a session as a chat claimed its turn.
type SessionTurn struct {
	Session *Session
	// Open names a turn that ran its step's tools and did not end (its process stopped), or "".
	Open string
}

// ErrTurnLost is a TurnWrite's claim that no longer holds the session's turn (it lapsed and
// another chat claimed it).
var ErrTurnLost = fault.New(fault.Conflict, "the chat's claim on the session's turn lapsed and another chat took the turn")

// ClaimSessionTurn takes the session's turn for c unless another live claim holds it, and answers
// the session: one conditional UpdateItem. A missing session, or one being deleted, is NotFound;
// a turn held is Conflict, with held the holder's Idempotency-Key record.
func (s *Store) ClaimSessionTurn(ctx context.Context, dev, sessionID string, c TurnClaim) (_ *SessionTurn, held string, _ error) {
	if err := checkIDs(dev, "session_id", sessionID); err != nil {
		return nil, "", err
	}
	if err := checkOpaque("token", c.Token, 128); err != nil {
		return nil, "", err
	}
	names := map[string]string{"#pk": AttrPK, "#del": attrDeleting, "#turn": attrTurn, "#until": attrTurnUntil, "#key": attrTurnKey, "#ver": attrVer}
	now := s.clock()
	values := map[string]types.AttributeValue{":tok": str(c.Token), ":until": num(now.Add(c.TTL).UnixMilli()), ":now": num(now.UnixMilli()), ":one": num(1)}
	update := "SET #turn = :tok, #until = :until REMOVE #key ADD #ver :one"
	if c.IdemKey != "" {
		update, values[":key"] = "SET #turn = :tok, #until = :until, #key = :key ADD #ver :one", str(c.IdemKey)
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: sessionKey(dev, sessionID).av(),
		UpdateExpression:                    &update,
		ConditionExpression:                 awsv2.String("attribute_exists(#pk) AND attribute_not_exists(#del) AND (attribute_not_exists(#turn) OR #until < :now)"),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if ccf, ok := isCondFailed(err); ok {
		if len(ccf.Item) == 0 || getBool(ccf.Item, attrDeleting) {
			return nil, "", notFound("session", sessionID)
		}
		return nil, getS(ccf.Item, attrTurnKey), fault.New(fault.Conflict, "session %s is answering another chat request; send this one once that has answered", sessionID)
	}
	if err != nil {
		return nil, "", dbErr(err, "claim the session's turn")
	}
	o, err := decodeRecord[Session](out.Attributes, "session", sessionID)
	if err != nil {
		return nil, "", err
	}
	return &SessionTurn{Session: o.rec, Open: getS(out.Attributes, attrTurnOpen)}, "", nil
}

// ReleaseSessionTurn gives back the turn token holds, and clears the open-turn mark too when
// clearOpen; nothing when token holds it no more.
func (s *Store) ReleaseSessionTurn(ctx context.Context, dev, sessionID, token string, clearOpen bool) error {
	if err := checkIDs(dev, "session_id", sessionID); err != nil {
		return err
	}
	update := "REMOVE #turn, #until, #key ADD #ver :one"
	names := map[string]string{"#turn": attrTurn, "#until": attrTurnUntil, "#key": attrTurnKey, "#ver": attrVer}
	if clearOpen {
		update, names["#open"] = "REMOVE #turn, #until, #key, #open ADD #ver :one", attrTurnOpen
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: sessionKey(dev, sessionID).av(),
		UpdateExpression:          &update,
		ConditionExpression:       awsv2.String("#turn = :tok"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: map[string]types.AttributeValue{":tok": str(token), ":one": num(1)},
	})
	if _, ok := isCondFailed(err); ok {
		return nil
	}
	return dbErr(err, "release the session's turn")
}

// TurnKeys names what a chat turn reads by key once it holds the session: the session's agent,
// flags, and idempotency records.
type TurnKeys struct {
	AgentID string
	Flags   []string
	Idem    []string
}

// TurnItems are what ReadTurn found: the flags set and the live records, by name.
type TurnItems struct {
	Agent *Agent
	Flags map[string]bool
	Idem  map[string]*IdemRecord
}

// ReadTurn reads k in one BatchGetItem. A missing agent (or one being deleted) is NotFound.
func (s *Store) ReadTurn(ctx context.Context, dev string, k TurnKeys) (*TurnItems, error) {
	if err := checkIDs(dev, "agent_id", k.AgentID); err != nil {
		return nil, err
	}
	keys := []itemKey{agentKey(dev, k.AgentID)}
	for _, f := range k.Flags {
		keys = append(keys, flagKey(dev, f))
	}
	for _, key := range k.Idem {
		if err := checkOpaque("key", key, 512); err != nil {
			return nil, err
		}
		keys = append(keys, idemKey(dev, key))
	}
	got, err := s.batchGet(ctx, keys, "", nil)
	if err != nil {
		return nil, err
	}
	a, err := decodeRecord[Agent](got[keys[0]], "agent", k.AgentID)
	if err != nil {
		return nil, err
	}
	out := &TurnItems{Agent: a.rec, Flags: map[string]bool{}, Idem: map[string]*IdemRecord{}}
	for _, f := range k.Flags {
		if it := got[flagKey(dev, f)]; it != nil {
			out.Flags[f] = getBool(it, "value")
		}
	}
	for _, key := range k.Idem {
		it := got[idemKey(dev, key)]
		if it == nil || s.ttlPassed(it) {
			continue
		}
		if out.Idem[key], err = decodeIdem(it); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// AgentTools is every tool of an agent, in the order they were made: one Query (another only past
// 1 MB). Unlike ToolsFor it does not read the agent: the caller has.
func (s *Store) AgentTools(ctx context.Context, dev, agentID string) ([]tool.Tool, error) {
	if err := checkIDs(dev, "agent_id", agentID); err != nil {
		return nil, err
	}
	items, err := s.queryAll(ctx, ownerPK(dev, Owner{OwnerAgent, agentID}), "TOOL#", false)
	if err != nil {
		return nil, err
	}
	if len(items) > MaxToolsPerOwner {
		return nil, fault.New(fault.TooLarge, "agent %s has more than %d tools", agentID, MaxToolsPerOwner)
	}
	out := make([]tool.Tool, 0, len(items))
	for _, it := range items {
		t, err := decodeTool(it)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, nil
}

// History is a session's whole history, oldest first: one Query (another only past 1 MB). Unlike
// ListMessages it does not read the session: the caller holds its turn.
func (s *Store) History(ctx context.Context, dev, sessionID string) ([]Message, error) {
	if err := checkIDs(dev, "session_id", sessionID); err != nil {
		return nil, err
	}
	items, err := s.queryAll(ctx, ownerPK(dev, Owner{OwnerSession, sessionID}), "MSG#", false)
	if err != nil {
		return nil, err
	}
	out := make([]Message, 0, len(items))
	for _, it := range items {
		m, err := decodeMessage(it)
		if err != nil {
			return nil, err
		}
		out = append(out, *m)
	}
	return out, nil
}

// TurnWrite is one write of a chat turn: the messages it appends to the history and, with them,
// the session's chat attributes, idempotency records and the turn's count of tool calls, all or
// nothing. Messages over one transaction's limits go in several, in order, the last carrying the
// rest.
type TurnWrite struct {
	Messages []Message
	// Token is the claim the write is made under: with it the session's chat attributes change
	// (Open, Release), and the write fails with ErrTurnLost when the claim holds no more. Without
	// it the session must only exist.
	Token string
	// Open sets the open-turn mark to the turn named ("" clears it); nil leaves it.
	Open    *string
	Release bool // gives the turn back
	// Idem are idempotency records written whole, and Drop those deleted: the chat holding the
	// session's turn is their only writer.
	Idem []*IdemRecord
	Drop []string
	// Calls are added to a turn's count of tool calls (TakeCalls' count).
	Calls *TurnCalls
}

// TurnCalls are n tool calls counted for a turn whose count lives ttl from its first.
type TurnCalls struct {
	Turn string
	N    int
	TTL  time.Duration
}

// WriteTurn writes w (see TurnWrite).
func (s *Store) WriteTurn(ctx context.Context, dev, sessionID string, w TurnWrite) error {
	if err := checkIDs(dev, "session_id", sessionID); err != nil {
		return err
	}
	tail, err := s.turnTail(dev, sessionID, w)
	if err != nil {
		return err
	}
	batches := turnBatches(w.Messages, len(tail))
	puts := make([][]txOp, len(batches))
	for i, b := range batches {
		// Every batch is checked before the first is written: nothing is written of a turn refused.
		if err := checkMessages(b); err != nil {
			return err
		}
		if puts[i], _, err = s.messageOps(dev, sessionID, b); err != nil {
			return err
		}
	}
	for i := range batches {
		ops := []txOp{{condLive(s, sessionKey(dev, sessionID)), notFound("session", sessionID)}}
		if i == len(batches)-1 {
			ops = tail
		}
		if err := s.transact(ctx, slices.Concat(ops, puts[i]), "write the chat turn"); err != nil {
			return err
		}
	}
	return nil
}

// turnTail is what the last transaction of w holds besides messages: the session's check or
// update, the records and the call count.
func (s *Store) turnTail(dev, sessionID string, w TurnWrite) ([]txOp, error) {
	ops := []txOp{s.sessionTurnOp(dev, sessionID, w)}
	for _, r := range w.Idem {
		item, err := idemItem(dev, r)
		if err != nil {
			return nil, err
		}
		ops = append(ops, txOp{item: types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: item}}})
	}
	for _, key := range w.Drop {
		ops = append(ops, txOp{item: deleteTx(s, idemKey(dev, key))})
	}
	if c := w.Calls; c != nil && c.N > 0 {
		ops = append(ops, txOp{item: types.TransactWriteItem{Update: &types.Update{
			TableName: &s.table, Key: callBudgetKey(dev, c.Turn).av(),
			UpdateExpression:          awsv2.String("ADD #calls :n SET #ttl = if_not_exists(#ttl, :exp), #kind = :kind"),
			ExpressionAttributeNames:  map[string]string{"#calls": attrCalls, "#ttl": AttrTTL, "#kind": attrKind},
			ExpressionAttributeValues: map[string]types.AttributeValue{":n": num(int64(c.N)), ":exp": ttlOf(s.clock().Add(c.TTL)), ":kind": str("call-budget")},
		}}})
	}
	return ops, nil
}

// sessionTurnOp is w's item on the session: a check that it exists, or the update of its chat
// attributes under w's claim.
func (s *Store) sessionTurnOp(dev, sessionID string, w TurnWrite) txOp {
	if w.Token == "" {
		return txOp{condLive(s, sessionKey(dev, sessionID)), notFound("session", sessionID)}
	}
	names := map[string]string{"#pk": AttrPK, "#del": attrDeleting, "#turn": attrTurn, "#ver": attrVer}
	values := map[string]types.AttributeValue{":tok": str(w.Token), ":one": num(1)}
	var set, remove []string
	if w.Open != nil {
		names["#open"] = attrTurnOpen
		if *w.Open == "" {
			remove = append(remove, "#open")
		} else {
			set, values[":open"] = append(set, "#open = :open"), str(*w.Open)
		}
	}
	if w.Release {
		names["#until"], names["#key"] = attrTurnUntil, attrTurnKey
		remove = append(remove, "#turn", "#until", "#key")
	}
	update := "ADD #ver :one"
	if len(set) > 0 {
		update += " SET " + strings.Join(set, ", ")
	}
	if len(remove) > 0 {
		update += " REMOVE " + strings.Join(remove, ", ")
	}
	return txOp{types.TransactWriteItem{Update: &types.Update{
		TableName: &s.table, Key: sessionKey(dev, sessionID).av(), UpdateExpression: &update,
		ConditionExpression:       awsv2.String("attribute_exists(#pk) AND attribute_not_exists(#del) AND #turn = :tok"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}}, ErrTurnLost}
}

// turnBatches splits msgs into the transactions of a TurnWrite, in order: each holds at most
// MaxAppendBytes of messages and, with its other items (tail in the last, the session's check in
// the others), at most 100 items. There is always one, for the tail.
func turnBatches(msgs []Message, tail int) [][]Message {
	per := 100 - tail
	var out [][]Message
	for len(msgs) > 0 {
		n, total := 0, 0
		for n < len(msgs) && n < per {
			total += MessageBytes(msgs[n])
			if n > 0 && total > MaxAppendBytes {
				break
			}
			n++
		}
		out, msgs = append(out, msgs[:n]), msgs[n:]
	}
	if len(out) == 0 {
		out = [][]Message{nil}
	}
	return out
}
