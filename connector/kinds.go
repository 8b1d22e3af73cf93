package connector

import "strconv"

// sequenceValue is {"seq":N,"ts":T}.
func sequenceValue(_ *generator, dst []byte, n, ts int64) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, n, 10)
	return appendTS(dst, ts)
}

// clickPages is the number of distinct pages of clicks.
const clickPages = 100

// clicksValue is {"user":"u<k>","page":"/p<j>","amount":A,"ts":T} with k
// below the generator's Keys, j below 100 and A in [1, 1000].
func clicksValue(g *generator, dst []byte, _, ts int64) []byte {
	r := &g.rng
	dst = append(dst, `{"user":"u`...)
	dst = strconv.AppendInt(dst, int64(r.intn(g.keys)), 10)
	dst = append(dst, `","page":"/p`...)
	dst = strconv.AppendInt(dst, int64(r.intn(clickPages)), 10)
	dst = append(dst, `","amount":`...)
	dst = strconv.AppendInt(dst, int64(r.intn(1000)+1), 10)
	return appendTS(dst, ts)
}

func appendTS(dst []byte, ts int64) []byte {
	dst = append(dst, `,"ts":`...)
	dst = strconv.AppendInt(dst, ts, 10)
	return append(dst, '}')
}

// textValue is a line of 5 to 12 words from vocabulary: the first and about
// one in eight of the others capitalised, about one in ten followed by a
// comma or semicolon, and a full stop, question or exclamation mark at the
// end.
func textValue(g *generator, dst []byte, _, _ int64) []byte {
	r := &g.rng
	words := 5 + r.intn(8)
	for i := range words {
		if i > 0 {
			if r.intn(10) == 0 {
				dst = append(dst, ",;"[r.intn(2)])
			}
			dst = append(dst, ' ')
		}
		start := len(dst)
		dst = append(dst, vocabulary[r.intn(len(vocabulary))]...)
		if i == 0 || r.intn(8) == 0 {
			dst[start] -= 'a' - 'A'
		}
	}
	return append(dst, ".?!"[min(r.intn(8), 2)])
}

// vocabulary holds the lowercase words of text lines.
var vocabulary = [...]string{
	"the", "a", "an", "and", "or", "but", "of", "to", "in", "on",
	"at", "by", "for", "with", "from", "over", "under", "after", "before", "between",
	"stream", "river", "water", "stone", "bridge", "valley", "mountain", "forest", "field", "meadow",
	"window", "door", "house", "garden", "street", "market", "harbour", "island", "tower", "castle",
	"king", "queen", "child", "mother", "father", "sister", "brother", "friend", "stranger", "sailor",
	"farmer", "baker", "miller", "weaver", "hunter", "singer", "painter", "writer", "reader", "keeper",
	"morning", "evening", "night", "day", "winter", "summer", "spring", "autumn", "season", "year",
	"light", "shadow", "fire", "smoke", "wind", "rain", "snow", "cloud", "storm", "thunder",
	"red", "green", "blue", "yellow", "white", "black", "grey", "golden", "silver", "bright",
	"old", "young", "small", "large", "quiet", "loud", "slow", "quick", "warm", "cold",
	"walks", "runs", "sings", "reads", "writes", "builds", "breaks", "carries", "follows", "leaves",
	"finds", "loses", "keeps", "gives", "takes", "sees", "hears", "knows", "thinks", "waits",
	"opens", "closes", "turns", "falls", "rises", "grows", "burns", "flows", "shines", "sleeps",
	"boat", "cart", "horse", "dog", "cat", "bird", "fish", "wolf", "bear", "fox",
	"bread", "wine", "salt", "honey", "apple", "grain", "milk", "cheese", "butter", "soup",
	"letter", "song", "story", "word", "name", "voice", "promise", "secret", "question", "answer",
	"road", "path", "gate", "wall", "roof", "floor", "table", "chair", "lamp", "bell",
	"gently", "slowly", "quickly", "softly", "loudly", "always", "never", "often", "again", "together",
	"here", "there", "now", "then", "away", "home", "inside", "outside", "above", "below",
	"one", "two", "three", "many", "few", "every", "each", "some", "all", "none",
}
