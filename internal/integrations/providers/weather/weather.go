// Package weather is the weather integration: the current weather of a place from OpenWeatherMap's
// Current Weather API (GET /data/2.5/weather?q=<location>&appid=<key>&units=metric), rendered as the
// text Julep returns (LangChain's OpenWeatherMapAPIWrapper over pyowm).
//
// Julep's provider, which this one ports: https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/integrations-service/integrations/utils/integrations/weather.py
package weather

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"sinew/internal/integrations"
)

// Setup of the weather provider.
type Setup struct {
	APIKey string `json:"openweathermap_api_key" jsonschema:"minLength=1" jsonschema_description:"OpenWeatherMap API key." sinew:"secret"`
}

// Arguments of get.
type Arguments struct {
	Location string `json:"location" jsonschema:"minLength=1" jsonschema_description:"The place, e.g. \"London,GB\"."`
}

// Output of get: a human-readable report.
type Output struct {
	Result string `json:"result"`
}

// current is the part of OpenWeatherMap's answer the report uses.
type current struct {
	Weather []struct {
		Description string `json:"description"`
	} `json:"weather"`
	Main struct {
		Temp      float64 `json:"temp"`
		FeelsLike float64 `json:"feels_like"`
		TempMin   float64 `json:"temp_min"`
		TempMax   float64 `json:"temp_max"`
		Humidity  float64 `json:"humidity"`
	} `json:"main"`
	Wind struct {
		Speed float64 `json:"speed"`
		Deg   float64 `json:"deg"`
	} `json:"wind"`
	Clouds struct {
		All float64 `json:"all"`
	} `json:"clouds"`
	Rain map[string]float64 `json:"rain"`
}

func get(ctx context.Context, env integrations.Env, s Setup, a Arguments) (Output, error) {
	var c current
	err := env.DoJSON(ctx, integrations.Request{
		URL:   env.BaseURL + "/data/2.5/weather",
		Query: map[string][]string{"q": {a.Location}, "appid": {s.APIKey}, "units": {"metric"}},
	}, &c)
	if err != nil {
		return Output{}, err
	}
	return Output{Result: format(a.Location, c)}, nil
}

// format renders the report exactly as LangChain's _format_weather_info does.
func format(location string, c current) string {
	status := ""
	if len(c.Weather) > 0 {
		status = c.Weather[0].Description
	}
	var b strings.Builder
	fmt.Fprintf(&b, "In %s, the current weather is as follows:\n", location)
	fmt.Fprintf(&b, "Detailed status: %s\n", status)
	fmt.Fprintf(&b, "Wind speed: %s m/s, direction: %s°\n", pyNum(c.Wind.Speed), pyNum(c.Wind.Deg))
	fmt.Fprintf(&b, "Humidity: %s%%\n", pyNum(c.Main.Humidity))
	b.WriteString("Temperature: \n")
	fmt.Fprintf(&b, "  - Current: %s°C\n", pyFloat(c.Main.Temp))
	fmt.Fprintf(&b, "  - High: %s°C\n", pyFloat(c.Main.TempMax))
	fmt.Fprintf(&b, "  - Low: %s°C\n", pyFloat(c.Main.TempMin))
	fmt.Fprintf(&b, "  - Feels like: %s°C\n", pyFloat(c.Main.FeelsLike))
	fmt.Fprintf(&b, "Rain: %s\n", pyDict(c.Rain))
	b.WriteString("Heat index: None\n") // the current-weather API has no heat index; pyowm prints None
	fmt.Fprintf(&b, "Cloud cover: %s%%", pyNum(c.Clouds.All))
	return b.String()
}

// pyFloat prints a float as Python's str does: always with a decimal point.
func pyFloat(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e16 {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// pyNum prints an integral value as an int (pyowm keeps OpenWeatherMap's ints) and others as floats.
func pyNum(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e16 {
		return strconv.FormatInt(int64(f), 10)
	}
	return pyFloat(f)
}

// pyDict prints pyowm's rain dict, e.g. {} or {'1h': 0.25}.
func pyDict(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("'%s': %s", k, pyFloat(m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// Provider is the weather provider.
var Provider = &integrations.Provider{
	Name:         "weather",
	FriendlyName: "Weather API",
	URL:          "https://openweathermap.org",
	Docs:         "https://openweathermap.org/current",
	Icon:         "https://openweathermap.org/themes/openweathermap/assets/img/logo_white_cropped.png",
	BaseURL:      "https://api.openweathermap.org",
	Methods: []*integrations.Method{
		integrations.NewMethod("get", "Get the current weather for a city", get),
	},
}
