// Package resources is sinew's resources over the HTTP API (the rows marked "resources").
//
// It covers agents with their metadata, the tools of agents and tasks, tasks, users, docs and their
// keyword search, sessions and their history, and the caller's flags. Handlers are thin over
// package store: they decode bodies strictly (unknown fields and wrong types named), reshape, and
// answer what the store gives back, which already shows every setup value as "<redacted>".
//
// The same input types and checks serve package system, whose handlers take plain objects.
//
// Conventions: POST answers 201 with the created object, DELETE 204, PUT replaces, PATCH
// merges (RFC 7386 JSON merge patch: an object merges key by key, null removes a key, anything else
// replaces). A tool PATCH follows Julep: at most one of function, integration, system, api_call, and
// it must agree with the type. A "<redacted>" written back under a setup key keeps the stored value.
package resources
