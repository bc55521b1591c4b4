package sfnapi

import "sinew/internal/sfnopt"

// NoHostPrefix is an sfn client option that stops StartSyncExecution from prefixing the endpoint
// host with `sync-`: a loopback endpoint (local mode) has no such host. Use it only there.
var NoHostPrefix = sfnopt.NoHostPrefix
