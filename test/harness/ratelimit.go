package harness

// LimitsOn turns the rate limits on (the quick environments turn them off).
var LimitsOn = map[string]string{"GATEHOUSE_RATE_LIMIT": "on"}
