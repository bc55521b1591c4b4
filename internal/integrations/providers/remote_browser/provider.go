package remotebrowser

import (
	"context"

	"sinew/internal/integrations"
)

// Provider is the remote_browser provider for the registry. Its base URL
// (SINEW_REMOTE_BROWSER_BASE_URL) is the browser used when neither setup nor arguments name one.
var Provider = &integrations.Provider{
	Name:         "remote_browser",
	FriendlyName: "Remote Browser",
	URL:          "https://chromedevtools.github.io/devtools-protocol/",
	Docs:         "https://docs.julep.ai/integrations/browser/remote-browser",
	Methods: []*integrations.Method{
		integrations.NewMethod("perform_action", "Perform one action in a remote Chrome/Chromium over the DevTools protocol: key, type, mouse_move, left_click, left_click_drag, right_click, middle_click, double_click, screenshot, cursor_position, navigate or refresh.", performAction),
	},
}

func performAction(ctx context.Context, ienv integrations.Env, setup Setup, args PerformActionArguments) (PerformActionOutput, error) {
	return PerformAction(ctx, Env{Guard: ienv.Guard, Log: ienv.Log, DefaultConnectURL: ienv.BaseURL}, setup, args)
}
