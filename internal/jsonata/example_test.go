package jsonata_test

import (
	"context"
	"fmt"

	"sinew/internal/jsonata"
)

// An expression is compiled once and evaluated against parsed JSON input; variables come in
// through Options.Bindings, and the result goes out as JSON.
func Example() {
	x, err := jsonata.Compile(`Account.Order.Product[Price > $min].{"name": Name, "total": Price * Quantity}`)
	if err != nil {
		panic(err)
	}
	in, err := jsonata.ParseJSON([]byte(`{"Account": {"Order": [{"Product": [
		{"Name": "Hat", "Price": 34.45, "Quantity": 2},
		{"Name": "Sock", "Price": 4.5, "Quantity": 3},
		{"Name": "Coat", "Price": 120, "Quantity": 1}]}]}}`))
	if err != nil {
		panic(err)
	}
	v, defined, err := x.Eval(context.Background(), in, jsonata.Options{
		Bindings: map[string]any{"min": 30},
	})
	if err != nil || !defined {
		panic(fmt.Sprint("no result: ", err))
	}
	out, err := jsonata.MarshalJSON(v)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output: [{"name":"Hat","total":68.9},{"name":"Coat","total":120}]
}
