// Package nexmark generates the event stream of the Nexmark benchmark:
// an online auction where persons register, open auctions and bid.
//
// Nexmark was defined by Tucker, Tufte, Papadimos and Maier, "NEXMark – A
// Benchmark for Queries over Data Streams" (technical report, Portland
// State University; cited as 2008, and as June 2010 by the suite below),
// and is run today as the queries q0 to q22 (and a later q23) of the
// nexmark/nexmark suite for Apache Flink, inspired by Apache Beam's
// Nexmark, whose generator it adapts. This package follows that
// generator's model and rules (GeneratorConfig, NexmarkConfiguration and
// the Person, Auction and Bid generators), written anew for skewer: the
// queries themselves are jobs of package runtime over its events.
//
// # The model
//
// An [Event] carries one [Person], [Auction] or [Bid], its Kind, its
// event number and its event time (ns since the Unix epoch). The records'
// fields are the reference model's, named in Go's way (emailAddress is
// Email, url is URL, dateTime is DateTime, in ns). The kinds
// interleave by event number n: with P, A and B the three proportions of
// [Config] (1, 3 and 46 by default), n mod (P+A+B) below P is a person,
// below P+A an auction, else a bid, so every 50 consecutive events hold
// exactly 1 person, 3 auctions and 46 bids (2%, 6%, 92%).
//
// Ids are functions of n: persons and auctions are numbered in creation
// order from [FirstPersonID] and [FirstAuctionID], so the last person and
// auction at event n are [Generator.LastPersonID] and
// [Generator.LastAuctionID], each an O(1) computation. An auction's seller
// is, with probability 1 - 1/HotSellersRatio, the hot seller, else
// uniform over the last NumActivePeople persons. Ids fall in batches of
// [HotBatch] (base-0 ids 0-99, 100-199, ...): the hot seller is the first
// person of the last person's batch, the hot auction the first auction of
// the last auction's batch, the hot bidder the second person of the last
// person's batch (so that hot bidders and hot sellers differ); each holds
// for HotBatch persons or auctions, then the next batch's takes over. A
// bid's auction is, with probability 1 - 1/HotAuctionRatio, the hot
// auction, else uniform over the last NumInFlightAuctions+1 auctions; its
// bidder, with probability 1 - 1/HotBiddersRatio, the hot bidder, else
// an active person. With the default ratios 2, 4 and
// 4, half of the bids take the hot auction's path and three quarters the
// hot bidder's; a cold draw can land on a hot id too.
//
// Event n has time FirstEventTime + floor(n * 10^9 / EventsPerSecond): the
// reference's inter-event delay, exact in integers. An auction expires at
// its time plus 1 + uniform [0, 2h) ns, h the time from it to the event
// that comes NumInFlightAuctions auctions later, so that about
// NumInFlightAuctions auctions are open at a time. Prices are in cents,
// round(100 * 10^(6u)) for u uniform: log-uniform from $1 to $10^6. The
// reserve is the initial bid plus a second price; categories are 10 to
// 14. Bids come through one of four hot channels (Google, Facebook,
// Baidu, Apple) with probability 1/2, else one of 10,000 numbered
// channels, each with its URL.
//
// # Strings without allocation
//
// No string is built per event. Names, cities and states come from the
// reference's vocabularies (11 first names, 9 last names, 10 cities, 6
// states); emails from a table of 4096 drawn by the reference's rule; a
// credit card is four consecutive groups of a text of 4-digit groups
// (65,536 distinct cards); item names, descriptions and the Extra padding
// are substrings of shared 64 KiB texts of random letters (names and
// descriptions with a space one character in 13, as the reference's
// strings). Extra keeps the reference's size rule: it brings an event's
// idealised size (8 bytes per number plus its strings) to within 20% of
// AvgPersonBytes, AvgAuctionBytes or AvgBidBytes (200, 500, 100). These
// tables (about 1.7 MB) are built once per process, on the first New, from
// a fixed seed: they are the same for every Config.
//
// # Where skewer differs from the reference
//
//   - Randomness is counter-based: event n draws from SplitMix64 seeded by
//     (Config.Seed, n), so events are a pure function of the Config and n.
//     The reference draws from one sequential SplittableRandom (unseeded in
//     the Flink suite, so its runs differ). The distributions are the
//     reference's; the values are not.
//   - One stream, split by stride: [NewPart] and [Sources] give part i of k
//     the events i, i+k, ..., identical to those of the whole stream, at
//     the whole stream's rate. The reference gives each of k generators a
//     block of ids and a timeline of its own at 1/k of the rate.
//   - IDLead is 0 by default, so that every seller, bidder and auction an
//     event names exists when it is named; the reference lets a cold draw
//     name up to 10 persons or auctions not yet created (IDLead = 10
//     restores that). For the same reason, while the batch's second
//     person is not yet created (and beyond IDLead), the hot bidder is the
//     previous batch's second person. The Flink suite's bid generator also
//     adds FirstPersonID to the bidder twice, naming persons that never
//     exist; skewer adds it once.
//   - Times are in nanoseconds, not milliseconds, auction lengths too.
//   - Not generated: the reference's rate shapes (a single rate here), its
//     out-of-order groups (off by default there too), delayed events and
//     wall-clock pacing (a consumer paces itself).
//   - The small choices (hot or cold, the channel) take 32 bits of a draw
//     each, biased by less than n/2^32 for a choice among n that is not a
//     power of two; prices come from a table of 2^(j/1024) and a cubic,
//     which agrees with math.Pow to the cent.
//
// # Guarantees and cost
//
// The same Config gives the same events, on every run; different seeds
// give different ones. [Generator.EventAt] returns any event without
// generating the ones before it, equal to sequential generation; parts of
// one Config partition its events. Golden files pin the stream
// (testdata/events.golden; prices assume amd64's float64 arithmetic).
// [Generator.Fill] allocates nothing and costs O(1) per event; the
// figure is in docs/results/nexmark.md. An Event is 320 bytes (the three
// records by value, two of them zero); a Generator holds no buffer.
//
// A Generator implements stream.Filler[Event] and stream.Positioner:
// runtime.FromFiller reads [Sources] as they are, and a checkpointed job
// replays them from the next event number ([Generator.AppendPosition]).
//
// # Concurrency
//
// A Generator is used by one goroutine at a time; EventAt, KindAt, TimeAt
// and the id functions do not change it. Generators of one Config, one
// per goroutine, share the read-only tables.
//
// Errors from New, NewPart and Sources wrap [ErrInvalidParameter] and name
// the field; Seek's wrap stream.ErrPosition.
package nexmark
