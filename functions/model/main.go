// Command model is agent_loop's model step (statemachines/agent_loop.asl.json): it feeds the
// previous turn's results, prompts the model once, and answers the calls to run next or the loop's
// output. It only wires: the configuration, the stepper and the Lambda error boundary.
package main

import (
	"context"
	"log/slog"
	"os"

	"sinew/internal/handler/modelenv"
	"sinew/internal/lambdaboundary"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	slog.SetDefault(log)
	s, err := modelenv.Stepper(context.Background(), log)
	if err != nil {
		slog.Error("model configuration", "error", err.Error())
		os.Exit(1)
	}
	lambdaboundary.Start(modelenv.NewModel(s))
}
