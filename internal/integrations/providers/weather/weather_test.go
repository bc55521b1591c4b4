package weather_test

import (
	"context"
	"net/http"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations/integrationstest"
	"sinew/internal/integrations/providers/weather"
)

const key = "owm-test-key-123"

// fakeOWM speaks OpenWeatherMap's Current Weather API: the key in appid, errors as {"cod","message"}.
func fakeOWM(t *testing.T, f *integrationstest.Faults) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.Serve(w) {
			return
		}
		q := r.URL.Query()
		if r.Method != http.MethodGet || r.URL.Path != "/data/2.5/weather" || q.Get("units") != "metric" {
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json")
		if q.Get("appid") != key {
			w.WriteHeader(401)
			_, _ = w.Write([]byte(`{"cod":401, "message": "Invalid API key. Please see https://openweathermap.org/faq#error401 for more info."}`))
			return
		}
		switch q.Get("q") {
		case "London,GB":
			_, _ = w.Write([]byte(`{"coord":{"lon":-0.1257,"lat":51.5085},"weather":[{"id":803,"main":"Clouds","description":"broken clouds","icon":"04d"}],"base":"stations","main":{"temp":15.2,"feels_like":14.62,"temp_min":14,"temp_max":16.31,"pressure":1012,"humidity":72},"visibility":10000,"wind":{"speed":4.12,"deg":240},"clouds":{"all":75},"dt":1700000000,"sys":{"country":"GB"},"timezone":0,"id":2643743,"name":"London","cod":200}`))
		case "Bergen,NO":
			_, _ = w.Write([]byte(`{"weather":[{"description":"light rain"}],"main":{"temp":8,"feels_like":5.5,"temp_min":7.5,"temp_max":9,"humidity":93},"wind":{"speed":6,"deg":190},"rain":{"1h":0.87},"clouds":{"all":100},"cod":200}`))
		default:
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"cod":"404","message":"city not found"}`))
		}
	})
}

func TestGet(t *testing.T) {
	f := &integrationstest.Faults{}
	r, _ := integrationstest.Start(t, weather.Provider, fakeOWM(t, f), nil)
	setup := map[string]any{"openweathermap_api_key": key}
	tests := []struct {
		name  string
		setup map[string]any
		args  map[string]any
		want  string
		kind  fault.Kind
		msg   string
		field string
	}{
		{name: "london", setup: setup, args: map[string]any{"location": "London,GB"}, want: "In London,GB, the current weather is as follows:\nDetailed status: broken clouds\nWind speed: 4.12 m/s, direction: 240°\nHumidity: 72%\nTemperature: \n  - Current: 15.2°C\n  - High: 16.31°C\n  - Low: 14.0°C\n  - Feels like: 14.62°C\nRain: {}\nHeat index: None\nCloud cover: 75%"},
		{name: "rain", setup: setup, args: map[string]any{"location": "Bergen,NO"}, want: "In Bergen,NO, the current weather is as follows:\nDetailed status: light rain\nWind speed: 6 m/s, direction: 190°\nHumidity: 93%\nTemperature: \n  - Current: 8.0°C\n  - High: 9.0°C\n  - Low: 7.5°C\n  - Feels like: 5.5°C\nRain: {'1h': 0.87}\nHeat index: None\nCloud cover: 100%"},
		{name: "unknown city", setup: setup, args: map[string]any{"location": "Atlantis"}, kind: fault.Provider, msg: "HTTP 404): {\"cod\":\"404\",\"message\":\"city not found\"}"},
		{name: "wrong key", setup: map[string]any{"openweathermap_api_key": "wrong-key-456"}, args: map[string]any{"location": "London,GB"}, kind: fault.Provider, msg: "refused the credentials in the setup (HTTP 401)"},
		{name: "no key", setup: nil, args: map[string]any{"location": "London,GB"}, kind: fault.InvalidInput, field: "setup.openweathermap_api_key"},
		{name: "no location", setup: setup, args: map[string]any{}, kind: fault.InvalidInput, field: "arguments.location"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Execute(context.Background(), "weather", "get", tc.setup, tc.args)
			if tc.kind != "" {
				integrationstest.CheckErr(t, err, tc.kind, tc.msg, tc.setup)
				if fault.FieldOf(err) != tc.field {
					t.Errorf("field %q, want %q", fault.FieldOf(err), tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res := got.(map[string]any)["result"]; res != tc.want {
				t.Fatalf("result\n%s\nwant\n%s", res, tc.want)
			}
		})
	}
	integrationstest.RunFaults(t, r, f, "weather", "", setup, map[string]any{"location": "London,GB"},
		integrationstest.StandardFaults(`{"cod":429,"message":"Your account is temporary blocked due to exceeding of requests limitation of your subscription type."}`, `{"cod":503,"message":"Service Unavailable"}`))
}
