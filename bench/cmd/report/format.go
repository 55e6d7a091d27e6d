package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// formatNs formats a duration in nanoseconds with precision that suits its
// size: 5.23, 48.1, 1,234.
func formatNs(v float64) string {
	switch a := math.Abs(v); {
	case a < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return group(math.Round(v))
}

// formatCount formats a count: whole numbers with thousands separators,
// others (medians of an even number of counts) with one decimal.
func formatCount(v float64) string {
	if v == math.Trunc(v) {
		return group(v)
	}
	whole, frac, _ := strings.Cut(strconv.FormatFloat(v, 'f', 1, 64), ".")
	w, _ := strconv.ParseFloat(whole, 64)
	return group(w) + "." + frac
}

// formatRatio formats a ratio as 1.05x, 12.3x or 146x.
func formatRatio(r float64) string {
	switch {
	case r < 10:
		return strconv.FormatFloat(r, 'f', 2, 64) + "x"
	case r < 100:
		return strconv.FormatFloat(r, 'f', 1, 64) + "x"
	}
	return group(math.Round(r)) + "x"
}

// formatMetric formats a custom metric's median.
func formatMetric(v float64) string {
	switch a := math.Abs(v); {
	case a == math.Trunc(a) || a >= 100:
		return group(math.Round(v))
	case a < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// group formats a whole number with commas between thousands.
func group(v float64) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', 0, 64)
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// table writes a markdown table. Columns listed in right are
// right-aligned.
func table(b *strings.Builder, header []string, rows [][]string, right ...int) {
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			fmt.Fprintf(b, " %s |", strings.ReplaceAll(c, "|", `\|`))
		}
		b.WriteString("\n")
	}
	row(header)
	b.WriteString("|")
	for i := range header {
		sep := "---"
		for _, r := range right {
			if r == i {
				sep = "--:"
			}
		}
		b.WriteString(sep + "|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		row(r)
	}
}
