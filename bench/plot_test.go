package bench

import (
	"fmt"
	"strings"
	"time"
)

// plotBackpressure draws the experiment as an SVG line chart: the producer's
// and the consumer's rates as shares of full speed over time, the
// producer's backpressured share as a shaded area, and the phases.
func plotBackpressure(r backpressureResult) string {
	const (
		w, h                     = 860, 380
		left, right, top, bottom = 60, 20, 30, 60
		yMax                     = 1.1
	)
	total := time.Duration(len(r.phases)) * phaseLength
	x := func(d time.Duration) float64 { return left + float64(d)/float64(total)*(w-left-right) }
	y := func(share float64) float64 { return top + (1-min(share, yMax)/yMax)*(h-top-bottom) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14" font-weight="bold">Backpressure: producer at 60%%, consumer slowed to 30%% and released (full speed %.2f M records/s)</text>`+"\n", left, r.fullSpeed/1e6)
	for _, share := range []float64{0, 0.25, 0.5, 0.75, 1} {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`, left, w-right, y(share), y(share))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%.0f%%</text>`+"\n", left-6, y(share)+4, 100*share)
	}
	for s := time.Duration(0); s <= total; s += 5 * time.Second {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%.0fs</text>`+"\n", x(s), h-bottom+16, s.Seconds())
	}
	for i, p := range r.phases {
		if i > 0 {
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#999" stroke-dasharray="4 3"/>`+"\n", x(p.start), x(p.start), top, h-bottom)
		}
		consumer := "consumer free"
		if p.consumer > 0 {
			consumer = fmt.Sprintf("consumer %.0f%%", 100*p.consumer)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n", x(p.start+phaseLength/2), h-bottom+32, consumer)
	}
	area := []string{fmt.Sprintf("%.1f,%.1f", x(0), y(0))}
	var producer, consumer []string
	for _, s := range r.series {
		area = append(area, fmt.Sprintf("%.1f,%.1f", x(s.at), y(s.backpressured)))
		producer = append(producer, fmt.Sprintf("%.1f,%.1f", x(s.at), y(s.producer)))
		consumer = append(consumer, fmt.Sprintf("%.1f,%.1f", x(s.at), y(s.consumer)))
	}
	area = append(area, fmt.Sprintf("%.1f,%.1f", x(total), y(0)))
	fmt.Fprintf(&b, `<polygon points="%s" fill="#fecaca" fill-opacity="0.6"/>`+"\n", strings.Join(area, " "))
	fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#059669" stroke-width="3"/>`+"\n", strings.Join(consumer, " "))
	fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#d97706" stroke-width="1.5"/>`+"\n", strings.Join(producer, " "))
	legend := []struct{ color, text string }{
		{"#d97706", "producer records/s"}, {"#059669", "consumer records/s"}, {"#fecaca", "producer backpressured (share of time)"},
	}
	for i, l := range legend {
		lx := left + 10 + i*230
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="14" height="10" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", lx, h-14, l.color, lx+20, h-5, l.text)
	}
	fmt.Fprintf(&b, `<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle">share of full speed</text>`+"\n", (top+h-bottom)/2, (top+h-bottom)/2)
	b.WriteString("</svg>\n")
	return b.String()
}
