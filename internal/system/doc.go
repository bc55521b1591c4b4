// Package system is the system tool executor: a call names an operation on sinew's own resources,
// run over the store for the calling developer.
//
// It ports Julep's execute_system
// (https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/agents-api/agents_api/activities/execute_system.py):
// a call names a (resource, subresource, operation) of sinew's own resources, and the dispatch
// table runs it over the store, scoped to the calling developer.
//
// Reshaping, as Julep's execute_system does it, with sinew's fixes:
//   - the developer id always comes from the caller's context; developer_id and x_developer_id in
//     the arguments are dropped (Julep overwrites them: the tenancy guard);
//   - agent_id, user_id, task_id, session_id, doc_id and owner_id must be UUID strings;
//   - the definition's resource_id is the default of the resource's own id (agent_id for an agent
//     call), which Julep carries and never uses;
//   - for the doc sub-resource, owner_id (with owner_type equal to the resource) is accepted for
//     <resource>_id, as Julep rewrites it;
//   - create and update take plain objects (Julep's {"data": {...}} is accepted too); update merges
//     the given fields into the record (a model rarely sends whole records, and a replacement would
//     drop metadata it never saw);
//   - doc search is sinew's keyword search; its fields may be top level or under search_params;
//   - nothing a system tool writes may touch setup: a metadata key x-*-setup, a tool's
//     integration.setup, or a tool definition naming a developer secret is refused naming the key
//     (a model runs system tools, and setup says where the developer's secrets are sent);
//   - session.chat runs through a Chatter, one level deeper, refused at MaxDepth, so no tool loop
//     can call itself forever; task.execution.create through an ExecutionStarter.
//
// A combination without a handler is a fault.InvalidInput naming it. Results are plain JSON values.
package system
