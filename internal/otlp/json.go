package otlp

// The OTLP JSON shapes (opentelemetry-proto, collector/metrics/v1 and
// metrics/v1, with the specification's JSON mapping: field names in
// lowerCamelCase, fixed64 and uint64 as decimal strings).

type jsonRequest struct {
	ResourceMetrics []jsonResourceMetrics `json:"resourceMetrics"`
}

type jsonResourceMetrics struct {
	Resource     jsonResource       `json:"resource"`
	ScopeMetrics []jsonScopeMetrics `json:"scopeMetrics"`
}

type jsonResource struct {
	Attributes []jsonKeyValue `json:"attributes"`
}

type jsonScopeMetrics struct {
	Scope   jsonScope    `json:"scope"`
	Metrics []jsonMetric `json:"metrics"`
}

type jsonScope struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

type jsonKeyValue struct {
	Key   string       `json:"key"`
	Value jsonAnyValue `json:"value"`
}

type jsonAnyValue struct {
	StringValue string `json:"stringValue"`
}

// jsonMetric has exactly one of its data fields set.
type jsonMetric struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Unit        string         `json:"unit,omitempty"`
	Gauge       *jsonGauge     `json:"gauge,omitempty"`
	Sum         *jsonSum       `json:"sum,omitempty"`
	Histogram   *jsonHistogram `json:"histogram,omitempty"`
	Summary     *jsonSummary   `json:"summary,omitempty"`
}

type jsonGauge struct {
	Points []jsonNumberPoint `json:"dataPoints"`
}

type jsonSum struct {
	Points      []jsonNumberPoint `json:"dataPoints"`
	Temporality int               `json:"aggregationTemporality"`
	Monotonic   bool              `json:"isMonotonic"`
}

type jsonHistogram struct {
	Points      []jsonHistogramPoint `json:"dataPoints"`
	Temporality int                  `json:"aggregationTemporality"`
}

type jsonSummary struct {
	Points []jsonSummaryPoint `json:"dataPoints"`
}

type jsonNumberPoint struct {
	Attributes []jsonKeyValue `json:"attributes"`
	Start      string         `json:"startTimeUnixNano"`
	Time       string         `json:"timeUnixNano"`
	AsDouble   float64        `json:"asDouble"`
}

type jsonHistogramPoint struct {
	Attributes []jsonKeyValue `json:"attributes"`
	Start      string         `json:"startTimeUnixNano"`
	Time       string         `json:"timeUnixNano"`
	Count      string         `json:"count"`
	Sum        float64        `json:"sum"`
	Counts     []string       `json:"bucketCounts"`
	Bounds     []float64      `json:"explicitBounds"`
}

type jsonSummaryPoint struct {
	Attributes []jsonKeyValue `json:"attributes"`
	Start      string         `json:"startTimeUnixNano"`
	Time       string         `json:"timeUnixNano"`
	Count      string         `json:"count"`
	Sum        float64        `json:"sum"`
	Quantiles  []jsonQuantile `json:"quantileValues"`
}

type jsonQuantile struct {
	Quantile float64 `json:"quantile"`
	Value    float64 `json:"value"`
}
