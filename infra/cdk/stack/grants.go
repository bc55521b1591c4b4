package stack

// tableAccess is what one function does with the table: the DynamoDB actions its code calls
// (a transaction's items count as the item actions they hold, which is how DynamoDB authorizes
// TransactWriteItems) and whether it queries the index. The abstract permissions of internal/deploy
// say which kinds of items a function touches; DynamoDB's IAM cannot tell item kinds apart, so the
// grant is these actions on the table. TestGrantsMatchCode derives the same from the code and fails
// on any difference, both ways.
type tableAccess struct {
	actions []string
	index   bool // Query on store.GSI1: lists a developer's executions and calls
}

var (
	// The item operations of the store as the API, chat, system and model functions use it.
	storeActions = []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:ConditionCheckItem",
		"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
)

// Since the nine handler packages became one (internal/handler), every function links the store
// code of the others, and the analysis (rapid type analysis, then VTA) finds those calls reachable:
// each role holds the store's item actions. Narrowing this again means keeping each function's
// store use behind its own narrow interface; until then the grant follows the linked code.
var tableAccessOf = map[string]tableAccess{
	"api":         {actions: storeActions, index: true},
	"chat":        {actions: storeActions},
	"prepare":     {actions: storeActions},
	"function":    {actions: storeActions},
	"integration": {actions: storeActions},
	"apicall":     {actions: storeActions},
	"system":      {actions: storeActions},
	"model":       {actions: storeActions},
	"settle":      {actions: storeActions},
}

// writes reports whether actions change items, so need the table key's write side through DynamoDB.
func writes(actions []string) bool {
	for _, a := range actions {
		switch a {
		case "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem":
			return true
		}
	}
	return false
}
