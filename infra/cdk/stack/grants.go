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
	// The executors read setup and arguments and record results by call id; they never update an
	// item in place.
	executorActions = []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:ConditionCheckItem",
		"dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
)

var tableAccessOf = map[string]tableAccess{
	"api":         {actions: storeActions, index: true},
	"chat":        {actions: storeActions},
	"prepare":     {actions: []string{"dynamodb:BatchGetItem", "dynamodb:UpdateItem"}},
	"function":    {actions: []string{"dynamodb:PutItem", "dynamodb:UpdateItem"}}, // one transaction: the call and its execution
	"integration": {actions: executorActions},
	"apicall":     {actions: executorActions},
	"system":      {actions: storeActions},
	"model":       {actions: storeActions},
	"settle":      {actions: []string{"dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:BatchWriteItem"}},
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
