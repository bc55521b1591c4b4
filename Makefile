# sinew: make demo (the main job, locally) and make test (every test). Each phase prints its time.
SHELL := /bin/bash
PHASE := scripts/phase.sh
GO_PACKAGES := ./...
FUNCTIONS := $(notdir $(wildcard functions/*))
BUILD_FLAGS := -tags lambda.norpc -trimpath -ldflags='-s -w'

.PHONY: all deps test unit lint asl build demo clean

all: test

deps:
	@$(PHASE) "deps: Go modules, npm packages, JDK" scripts/deps.sh

lint:
	@$(PHASE) "lint: gofmt" bash -c 'out=$$(gofmt -l $$(git ls-files "*.go")); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi'
	@$(PHASE) "lint: go vet" go vet $(GO_PACKAGES)

# One DynamoDB Local serves every test binary (SINEW_TEST_DYNAMODB_ENDPOINT); each test makes its own table.
unit:
	@$(PHASE) "test: go test, one DynamoDB Local for all packages" go run ./internal/testenv/ddblocal/cmd/ddblocal -- go test -count=1 $(GO_PACKAGES)

asl:
	@$(PHASE) "lint: asl-validator on statemachines/ and events/" bash -c 'files=$$(ls statemachines/*.asl.json events/workflows/*.asl.json 2>/dev/null); args=""; for f in $$files; do args="$$args --json-path $$f"; done; npx --no-install asl-validator $$args' 

build:
	@mkdir -p dist
	@$(PHASE) "build: every function as linux/arm64 bootstrap" bash -c 'set -e; for f in $(FUNCTIONS); do \
		mkdir -p dist/$$f; \
		GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build $(BUILD_FLAGS) -o dist/$$f/bootstrap ./functions/$$f; \
		echo "  dist/$$f/bootstrap $$(du -h dist/$$f/bootstrap | cut -f1)"; done'

test: deps lint asl unit build
	@echo "make test: all phases passed"

demo: deps
	@$(PHASE) "demo" go run ./infra/local demo

clean:
	rm -rf dist .local
