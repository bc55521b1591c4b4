package dummy_test

import (
	"context"
	"fmt"

	"sinew/internal/integrations"
	"sinew/internal/integrations/providers/dummy"
	"sinew/internal/jsonv"
)

// A provider runs through a registry: Execute checks the merged arguments against the method's
// schema and runs it. dummy echoes its arguments; its registry needs no dialer, as it opens no
// connection.
func Example() {
	reg := integrations.New(nil)
	reg.MustRegister(dummy.Provider)
	out, err := reg.Execute(context.Background(), "dummy", "echo", nil, map[string]any{"city": "Lisbon", "days": 3})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(jsonv.EncodeString(out))
	out, _ = reg.Execute(context.Background(), "dummy", "send", nil, map[string]any{"to": "a@b.test"})
	fmt.Println(jsonv.EncodeString(out))
	_, err = reg.Execute(context.Background(), "dumy", "echo", nil, nil)
	fmt.Println(err)
	// Output:
	// {"city":"Lisbon","days":3}
	// {"to":"a@b.test"}
	// unknown integration provider "dumy"; known providers: dummy
}
