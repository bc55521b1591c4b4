package system

import (
	"context"
	"errors"
	"strings"
	"testing"

	chatpkg "sinew/internal/chat"
	systempkg "sinew/internal/system"
)

// TestLazyChatRetriesAFailedBuild: a build that fails (the model's key unreadable, say) fails that
// session.chat with its reason, and the next session.chat builds again rather than keeping the failure.
func TestLazyChatRetriesAFailedBuild(t *testing.T) {
	builds := 0
	l := &lazyChat{build: func(context.Context) (*chatpkg.Service, error) {
		builds++
		return nil, errors.New("the secret could not be read")
	}}
	for i := range 2 {
		_, err := l.Chat(context.Background(), systempkg.Context{DeveloperID: "dev"}, "s", map[string]any{})
		if err == nil || !strings.Contains(err.Error(), "the secret could not be read") {
			t.Fatalf("call %d: err = %v", i, err)
		}
	}
	if builds != 2 {
		t.Errorf("builds = %d, want 2 (a failure is not kept)", builds)
	}
}
