module sinew/internal/jsonata/compare

go 1.26.6

require (
	github.com/blues/jsonata-go v1.5.4
	sinew v0.0.0
)

replace sinew => ../../..
