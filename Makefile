# sinew: make demo (the main job, locally) and make test (every test). Each phase prints its time.
SHELL := /bin/bash
PHASE := infra/scripts/phase.sh
GO_PACKAGES := ./...
# Where local mode records the AWS requests of make unit and make demo for make iam-check
# (SINEW_LOCAL_IAM_RECORD): absolute, since each test binary runs in its own package's folder.
IAM_RECORDS := $(CURDIR)/dist/iam-records

.PHONY: all deps test unit lint asl build demo clean conformance pictures

all: test

deps:
	@$(PHASE) "deps: Go modules, npm packages, JDK, ffmpeg, Chromium, AWS CLI, cfn-lint" infra/scripts/deps.sh

lint:
	@$(PHASE) "lint: gofmt" bash -c 'out=$$(gofmt -l $$(git ls-files "*.go")); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi'
	@$(PHASE) "lint: go vet" go vet $(GO_PACKAGES)
	@$(MAKE) --no-print-directory funclen pkgdoc staticcheck

# funclen: no non-test function over 100 lines (a plain table excepted); exits 1 naming each.
.PHONY: funclen pkgdoc staticcheck
funclen:
	@$(PHASE) "lint: functions of at most 100 lines" go run ./infra/scripts/funclen .

# pkgdoc: every package's doc opens with one sentence of at most 30 words (the CDK module's too).
pkgdoc:
	@$(PHASE) "lint: package docs open with one short sentence" go run ./infra/scripts/pkgdoc . infra/cdk

# staticcheck at the version go.mod pins as a tool (go tool staticcheck), its default checks.
staticcheck:
	@$(PHASE) "lint: staticcheck (pinned in go.mod)" go tool staticcheck $(GO_PACKAGES)

# One DynamoDB Local serves every test binary (SINEW_TEST_DYNAMODB_ENDPOINT); each test makes its own table.
# Every local mode the tests start records its AWS requests for make iam-check.
unit:
	@rm -rf $(IAM_RECORDS)/unit
	@$(PHASE) "test: go test, one DynamoDB Local for all packages" env SINEW_LOCAL_IAM_RECORD=$(IAM_RECORDS)/unit go run ./internal/testenv/ddblocal/cmd/ddblocal -- go test -count=1 $(GO_PACKAGES)
	@$(PHASE) "test: the race detector on concurrent JSONata evaluations (they must share nothing writable)" go test -race -count=1 -run 'Concurrent' ./internal/jsonata/... ./internal/asl/jsonata/...

# jsonata-suite: the official JSONata 2.0.6 test suite through internal/jsonata; prints the count
# of passing cases (the exceptions, with reasons, are in internal/jsonata/testdata/suite-exceptions.txt).
.PHONY: jsonata-suite
jsonata-suite:
	@$(PHASE) "test: the JSONata 2.0.6 test suite (internal/jsonata)" bash -c 'set -o pipefail; go test -count=1 -run "^TestSuite$$" -v ./internal/jsonata/ | grep -E "suite_test|^(---|ok|FAIL)"'

asl:
	@$(PHASE) "lint: asl-validator on statemachines/ and events/" bash -c 'files=$$(ls statemachines/*.asl.json events/workflows/*.asl.json 2>/dev/null); args=""; for f in $$files; do args="$$args --json-path $$f"; done; infra/node_modules/.bin/asl-validator $$args' 

# pictures: statemachines/<name>.svg drawn from each definition as local mode's console lays it out
# (the README shows them; internal/console's TestPicturesAreCurrent fails when one is stale).
pictures:
	@$(PHASE) "pictures: the state machines drawn from statemachines/*.asl.json" go run ./internal/console/cmd/pictures

build:
	@$(PHASE) "build: every function as a linux/arm64 bootstrap" infra/scripts/build.sh arm64

test: deps lint asl unit conformance jsonata-suite build cdk-test bench-smoke iam-check
	@echo "make test: all phases passed"

demo: deps
	@rm -rf $(IAM_RECORDS)/demo
	@$(PHASE) "demo: local mode, a call of each type (SMTP, ffmpeg), a function tool resumed by the AWS CLI, two scripted chat turns" env SINEW_LOCAL_IAM_RECORD=$(IAM_RECORDS)/demo go run ./infra/demo

clean:
	rm -rf dist .local

# Replays the recorded AWS executions of the usable set through the embedded engine and prints
# pass/fail per area and in all (the line "ALL (usable set) <passed> <total>"), with every failing case and its reason
# (internal/asl/conformance; the recordings are its testdata). It fails when missing data or a lost
# case on the pass list; make test runs it to print the count.
conformance:
	@$(PHASE) "conformance: recorded AWS executions through internal/asl" go run ./internal/asl/conformance/cmd/conformance

# iam-check: every AWS request the functions and state machines sent in make unit's and make demo's
# local modes, evaluated against the policies of the stack make cdk-test synthesized (identity
# policies, key and resource policies, conditions included) with @cloud-copilot/iam-simulate. It
# prints "N AWS requests by ... allowed; K statements no request used", those statements, and every
# denied request with the simulator's explanation; it fails on a denial, or without records or template.
.PHONY: iam-check
iam-check:
	@$(PHASE) "test: IAM check (recorded AWS requests against the synthesized policies)" go run ./infra/scripts/iamcheck -template infra/cdk/cdk.out -records $(IAM_RECORDS)/unit,$(IAM_RECORDS)/demo

# The CDK app (infra/cdk, its own Go module). synth: the real stack in infra/cdk/cdk.out, each
# bootstrap built by go build, cdk-nag and cfn-lint clean; it names the functions still missing.
synth:
	@$(PHASE) "synth: the CDK stack (cdk-nag, cfn-lint)" infra/cdk/check.sh synth

# cdk-test: the CDK app's Go tests (template assertions, IAM, cdk-nag, cfn-lint), asl-validator on
# every state machine, and the real synth once every function exists.
cdk-test:
	@$(PHASE) "test: CDK app (assertions, cdk-nag, cfn-lint, asl-validator)" infra/cdk/check.sh test

# The whole system on one machine: endpoints printed at start and written to .local/endpoints.json.
.PHONY: local
local:
	go run ./infra/local $(LOCAL_FLAGS)

# bench: every figure of infra/bench/BENCHMARKS.md measured in one run, beside the peer engine
# aws-local-stepfunctions on the definitions of infra/bench/peer/defs; bench-smoke runs each part a few iterations.
.PHONY: bench bench-smoke
bench:
	@$(PHASE) "bench: infra/bench/BENCHMARKS.md (sinew beside aws-local-stepfunctions)" go run ./infra/bench/cmd/sinewbench -out infra/bench/BENCHMARKS.md

bench-smoke:
	@$(PHASE) "bench: smoke run of every part" bash -c 'out=$$(mktemp) && go run ./infra/bench/cmd/sinewbench -smoke -out "$$out" && rm -f "$$out"'

# fuzz: every Go fuzz target in the tree (infra/scripts/fuzz.sh finds them), FUZZTIME each, one at a time;
# a crasher fails it and is kept under the package's testdata/fuzz. `make test` runs the seeds.
.PHONY: fuzz
fuzz:
	@$(PHASE) "fuzz: every Go fuzz target, $(or $(FUZZTIME),60s) each" env FUZZTIME=$(or $(FUZZTIME),60s) infra/scripts/fuzz.sh

# soak: the reliability load test at full size (1,000 concurrent tool calls of mixed types,
# 200 function calls resumed by concurrent clients) through local mode, and the kill -9 tests at
# 150 (chat hand-offs and tool calls; function calls answered 0.35 s before the crash); make test
# runs N=100, M=20, and the kill -9 tests at 12 and 20. Then twice each AWS quota at a tenth of
# AWS's figures (make test: a hundredth).
.PHONY: soak
soak:
	@$(PHASE) "soak: 1,000 tool_calls, 200 function calls; 150 chat hand-offs and 150 tool calls, 150 answered function calls through a kill -9 (internal/e2e)" env SINEW_SOAK=1 go run ./internal/testenv/ddblocal/cmd/ddblocal -- go test -count=1 -timeout 60m -v -run 'TestLoad$$|TestChatKill9DuringHandOff$$|TestFunctionCallsKill9$$' ./internal/e2e/
	@$(PHASE) "soak: twice each AWS quota through local mode --quotas=aws*0.1: none lost, none doubled (infra/local)" env SINEW_SOAK=1 go run ./internal/testenv/ddblocal/cmd/ddblocal -- go test -count=1 -timeout 20m -v -run 'TestQuotasThrottleWithoutLoss$$' ./infra/local/

# deploy / destroy: cdk deploy / cdk destroy of infra/cdk's app (its cdk.json) in the account and
# Region of the shell's AWS credentials (bootstrapped once: see the deploy guide in
# infra/cdk/README.md). CONTEXT holds the settings as key=value words, each passed as -c:
#   AWS_REGION=eu-west-1 make deploy CONTEXT="stage=dev alarmEmail=ops@example.com SINEW_MODEL=bedrock:eu.anthropic.claude-haiku-4-5-20251001-v1:0"
#   make destroy CONTEXT="stage=dev"
# The model id must be one the Region can call (the guide's step 2); deploy's preflight refuses,
# before CloudFormation starts, one it cannot and reservations the account's concurrency cannot give.
# CDK_FLAGS adds CLI flags (e.g. --require-approval never in CI; destroy asks unless --force).
.PHONY: deploy destroy
deploy:
	@$(PHASE) "deploy: preflight, then cdk deploy (infra/cdk)" infra/cdk/check.sh deploy $(foreach c,$(CONTEXT),-c $(c)) $(CDK_FLAGS)

destroy:
	@$(PHASE) "destroy: cdk destroy (infra/cdk)" infra/cdk/check.sh destroy $(foreach c,$(CONTEXT),-c $(c)) $(CDK_FLAGS)
