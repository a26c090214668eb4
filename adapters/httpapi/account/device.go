package account

import "strings"

// device names the browser and system of a User-Agent in words a person
// recognises ("Firefox on Windows"), for the sessions page. It reads only
// well-known tokens, in the order that tells browsers apart (Edge and
// Opera say "Chrome" too, Chrome says "Safari"); anything else is "Unknown
// browser" (or "Unknown device" when the system is unknown too), never the
// raw string.
func device(userAgent string) string {
	if len(userAgent) > 1024 {
		userAgent = userAgent[:1024]
	}
	browser, system := browserOf(userAgent), systemOf(userAgent)
	switch {
	case system != "":
		return browser + " on " + system
	case browser == unknownBrowser:
		return "Unknown device"
	}
	return browser
}

const unknownBrowser = "Unknown browser"

func browserOf(ua string) string {
	switch {
	case ua == "":
		return unknownBrowser
	case strings.Contains(ua, "Edg/"), strings.Contains(ua, "EdgA/"), strings.Contains(ua, "EdgiOS/"):
		return "Edge"
	case strings.Contains(ua, "OPR/"), strings.Contains(ua, "Opera"):
		return "Opera"
	case strings.Contains(ua, "SamsungBrowser/"):
		return "Samsung Internet"
	case strings.Contains(ua, "Firefox/"), strings.Contains(ua, "FxiOS/"):
		return "Firefox"
	case strings.Contains(ua, "HeadlessChrome/"):
		return "Headless Chrome"
	case strings.Contains(ua, "Chromium/"):
		return "Chromium"
	case strings.Contains(ua, "Chrome/"), strings.Contains(ua, "CriOS/"):
		return "Chrome"
	case strings.Contains(ua, "Safari/") && strings.Contains(ua, "Version/"):
		return "Safari"
	case strings.HasPrefix(ua, "curl/"):
		return "curl"
	case strings.HasPrefix(ua, "Go-http-client/"):
		return "Go program"
	case strings.HasPrefix(ua, "node"), strings.Contains(ua, "undici"):
		return "Node.js program"
	}
	return unknownBrowser
}

func systemOf(ua string) string {
	switch {
	case strings.Contains(ua, "iPhone"):
		return "iPhone"
	case strings.Contains(ua, "iPad"):
		return "iPad"
	case strings.Contains(ua, "Android"):
		return "Android"
	case strings.Contains(ua, "CrOS"):
		return "ChromeOS"
	case strings.Contains(ua, "Windows"):
		return "Windows"
	case strings.Contains(ua, "Mac OS X"), strings.Contains(ua, "Macintosh"):
		return "macOS"
	case strings.Contains(ua, "Linux"), strings.Contains(ua, "X11"):
		return "Linux"
	}
	return ""
}
