package toolsearch

import (
	"strings"
	"sync"
)

// Stem strips the common English inflections a light stemmer handles (plurals, -ing, -ed, -ly,
// -ment, -ness, -ation, a final e), so that a word and its forms meet: "schedule", "scheduled",
// "scheduling" → "schedul"; "replies", "reply" → "repli". Words of three letters or fewer stay.
func Stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "i"
	case strings.HasSuffix(w, "es") && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "zes")):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	for _, suf := range []string{"ations", "ation", "ments", "ment", "ness", "ing", "ed", "ly"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			w = w[:len(w)-len(suf)]
			if suf == "ing" || suf == "ed" {
				w = undouble(w)
			}
			break
		}
	}
	if strings.HasSuffix(w, "y") && len(w) > 3 {
		w = w[:len(w)-1] + "i" // reply, replied, replies meet at "repli"
	}
	if strings.HasSuffix(w, "e") && len(w) > 4 {
		w = w[:len(w)-1]
	}
	return w
}

// undouble drops a doubled final consonant left by -ing or -ed: "running" → "run".
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// stopWords carry no meaning for choosing a tool.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the to of for in on at by with from into and or but not no is are was were be been
		it its this that these those my me i we our us you your he she they them their his her please can could would
		should will shall do does did have has had get got some any all what which who whom whose when where how why
		there here then than so as if about up out over under again also just very too let lets make give show tell
		one`) {
		m[w] = true
	}
	return m
}()

// synonymGroups are words that name one thing in tool descriptions; a query word finds its
// group's other words too, at weightSynonym.
var synonymGroups = [][]string{
	{"send", "post", "message", "notify", "know", "tell", "announce"},
	{"email", "send"},
	{"email", "mail", "gmail", "inbox"},
	{"text", "sms"},
	{"bug", "issue", "ticket", "incident", "error"},
	{"meet", "meeting", "event", "calendar", "appointment"},
	{"schedule", "book", "reserve"},
	{"find", "search", "lookup", "query"},
	{"remove", "delete", "cancel", "trash"},
	{"create", "add", "new", "open"},
	{"update", "change", "edit", "set", "modify"},
	{"read", "fetch", "download", "retrieve", "open"},
	{"show", "list"},
	{"price", "quote", "cost", "worth"},
	{"spend", "cost", "bill", "invoice"},
	{"money", "balance", "payment", "charge"},
	{"refund", "return"},
	{"picture", "image", "photo", "drawing"},
	{"make", "generate", "create", "draw"},
	{"scan", "scanned", "ocr"},
	{"aloud", "speak", "say", "speech"},
	{"deck", "presentation", "slides", "file"},
	{"mov", "mp4", "avi", "mkv", "webm", "gif", "video", "format"},
	{"visitor", "visit", "views", "traffic", "sessions"},
	{"www", "domain", "dns", "cname", "subdomain"},
	{"leak", "leaked", "breach", "compromised", "pwned"},
	{"warm", "warmer", "cool", "cooler", "heat", "degrees", "thermostat", "temperature"},
	{"miles", "kilometers", "meters", "feet", "pounds", "kilograms", "unit"},
	{"cpu", "memory", "latency", "utilization", "metric"},
	{"build", "pipeline", "ci"},
	{"website", "site", "url", "page", "web"},
	{"audio", "sound", "speech", "voice", "recording"},
	{"video", "movie", "clip"},
	{"pdf", "document", "file"},
	{"doc", "document", "page", "wiki", "notes"},
	{"spreadsheet", "sheet", "cell", "row"},
	{"tweet", "twitter", "x"},
	{"deploy", "release", "production", "ship"},
	{"rollback", "previous", "revert"},
	{"weather", "rain", "temperature", "forecast"},
	{"flight", "fly", "airport", "plane"},
	{"hotel", "room", "stay"},
	{"drive", "directions", "travel", "distance"},
	{"near", "nearby", "places"},
	{"coordinates", "latitude", "longitude", "geocode"},
	{"vacation", "leave", "pto", "off"},
	{"candidate", "applicant", "hire"},
	{"job", "opening", "position"},
	{"user", "account", "employee"},
	{"lights", "light", "lamp"},
	{"package", "parcel", "shipment", "tracking"},
	{"sign", "signature", "contract"},
	{"remind", "reminder"},
	{"todo", "task"},
	{"newsletter", "campaign", "mailing", "subscriber"},
	{"perform", "performance", "report", "rate"},
	{"customer", "client"},
	{"lead", "prospect", "contact"},
	{"deal", "opportunity"},
	{"transcript", "transcribe"},
	{"translate", "language"},
	{"stock", "share", "ticker", "inventory"},
	{"bitcoin", "crypto", "cryptocurrency", "coin"},
	{"currency", "euro", "dollar", "yen", "pound", "exchange"},
	{"sql", "query", "select", "database", "table"},
	{"columns", "schema", "describe"},
	{"logs", "log"},
	{"cpu", "metric", "metrics", "utilization"},
	{"server", "instance", "ec2"},
	{"link", "url", "presign", "share"},
	{"expense", "receipt", "reimburse"},
	{"vulnerable", "vulnerability", "vulnerabilities", "security"},
	{"certificate", "ssl", "tls"},
	{"dns", "record", "domain"},
	{"combine", "merge"},
	{"pr", "pull", "request"},
	{"plan", "subscription"},
	{"free", "availability", "available", "slots"},
	{"reply", "answer", "respond"},
	{"paper", "papers", "research", "arxiv"},
	{"news", "articles"},
}

// synonyms maps a stem to the stems of its groups' other words.
var synonyms = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	for _, g := range synonymGroups {
		var stems []string
		for _, w := range g {
			stems = append(stems, Terms(w)...)
		}
		for _, a := range stems {
			for _, b := range stems {
				if a != b && !contains(m[a], b) {
					m[a] = append(m[a], b)
				}
			}
		}
	}
	return m
})

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
