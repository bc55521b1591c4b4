package app

// openapi.json beside this file is the HTTP API's reference: the OpenAPI 3.1 document GET
// /openapi.json serves, committed so it can be read without running sinew. TestOpenAPIDocument fails
// when it and the registered routes differ; this rewrites it.
//go:generate go test -count=1 -run ^TestOpenAPIDocument$ . -update
