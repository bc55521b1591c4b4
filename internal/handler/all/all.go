// Package all is every Lambda's constructor by function name: local mode builds its in-process
// functions from it, as each functions/<name>/main.go starts its own. Only what builds every
// function imports it, since it links every function's packages.
package all

import (
	"sinew/internal/handler"
	"sinew/internal/handler/api"
	"sinew/internal/handler/apicall"
	"sinew/internal/handler/chat"
	"sinew/internal/handler/function"
	"sinew/internal/handler/integration"
	"sinew/internal/handler/model"
	"sinew/internal/handler/prepare"
	"sinew/internal/handler/settle"
	"sinew/internal/handler/system"
)

// Lambdas is the constructor of each Lambda, keyed by its function name (package deploy).
var Lambdas = map[string]handler.Constructor{
	"api":         api.New,
	"apicall":     apicall.New,
	"chat":        chat.New,
	"function":    function.New,
	"integration": integration.New,
	"model":       model.New,
	"prepare":     prepare.New,
	"settle":      settle.New,
	"system":      system.New,
}
