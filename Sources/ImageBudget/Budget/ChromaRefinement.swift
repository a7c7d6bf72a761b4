import Foundation
import ImageCodec

/// The SSIMULACRA2 stage of the allocation: starting from the SSIM choice, it chooses each
/// JPEG's chroma (quantization and resolution) and moves bytes towards the images SSIMULACRA2
/// scores worst.
///
/// SSIMULACRA2 costs about ten times as much per candidate as SSIM, so the search over sizes
/// and qualities stays on SSIM (which ranks sizes and qualities of one image as SSIMULACRA2
/// does) and SSIMULACRA2 is measured only where it can change the outcome:
/// 1. every chosen candidate (the result reports it anyway);
/// 2. a levelling round: water filling on a local model of each image's score over bytes
///    gives each the bytes that would bring all to one level; the images that would grow are
///    also tried at their next larger size;
/// 3. chroma quality `chromaStep` finer for the images near the worst and coarser for those
///    well above it, at the same luma quality (luma SSIM cannot move): at these rates finer
///    chroma buys most images more SSIMULACRA2 per byte than finer luma, and an image far
///    above the worst, often the one luma SSIM holds at its floor, gives chroma bytes away;
/// 4. 4:4:4 at about the same bytes for the images near the worst whose finer-chroma probe
///    gained steeply (the others would only lose with it);
/// 5. a second levelling round, moving each image along the cheaper way: luma, or the chroma
///    step its probe measured.
/// Every choice in between and at the end is the allocator's max-min then knapsack over the
/// measured candidates, on SSIMULACRA2. With libjpeg-turbo's encoder no candidate may lose more
/// than `ssimAllowance` of luma SSIM below the SSIM choice's worst image, so the colour gain
/// never costs visible luma detail. The perceptual encoder has no such floor: its dead zones
/// lower luma SSIM by design where texture hides the loss, so SSIM would hold it back from its
/// gains (SSIMULACRA2, which the search maximises, counts lost detail itself).
struct ChromaRefinement {
    let options: UploadBudgetOptions
    let store: EvaluationStore

    /// Points above the worst image within which an image may become the worst after a
    /// chroma change (a chroma step or 4:4:4 moves a score by about ±2-7).
    static let contenderMargin = 8.0
    /// Rounds of levelling (each measures a candidate or two per image that moves). A second
    /// round gained 0.3-0.5 points on the five-photo benchmark sets for 0.1-0.2 s more.
    static let rebalancingRounds = 1
    /// SSIMULACRA2 points per doubling of bytes is about `priorSlope` · ln 2: the slope of the
    /// local model until an image has two measured points (17-22 points per doubling measured
    /// at 1280 px on the sample photos).
    static let priorSlope = 25.0
    /// Images whose levelled bytes differ from their current ones by less than this share stay.
    static let minimumMove = 0.03
    /// SSIMULACRA2 points per e-fold of bytes from finer chroma quantization above which an
    /// image is worth a 4:4:4 probe: twice what finer luma typically buys (`priorSlope`).
    static let chromaHungrySlope = 50.0
    /// Chroma quality steps probed around each chosen candidate's (about ±5 SSIMULACRA2 points
    /// and ±3-15% of bytes on the sample photos).
    static let chromaStep = 15
    /// How far below the SSIM choice's worst luma SSIM a candidate may go (libjpeg-turbo's
    /// encoder only).
    static let ssimAllowance = 0.009

    private var allocator: BudgetAllocator { BudgetAllocator(options: options, store: store) }
    /// Whether candidates are held to a luma SSIM floor, and so measured with SSIM: with
    /// libjpeg-turbo's encoder only.
    private var measuresSSIM: Bool { options.jpegEncoder == .libjpegTurbo }
    private var objective: Objective { .ssimulacra2(slack: options.worstDistortionSlack) }

    /// The refined choice; `choice` and `measured` come from ``BudgetAllocator``.
    func refine(_ choice: [Evaluation], measured: [[Evaluation]]) async throws(UploadBudgetError) -> [Evaluation] {
        let ssimFloor =
            measuresSSIM ? (choice.compactMap(\.ssim).min() ?? 0) - Self.ssimAllowance : -Double.infinity
        var pool = try await scored(choice.enumerated().map { [$1] })
        var current = pool.map { $0[0] }

        // 2. Levelling towards the worst images.
        (pool, current) = try await levelled(current, pool: pool, measured: measured, ssimFloor: ssimFloor)

        // 3. Chroma quality around the levelled choice.
        let probes = try await scored(chromaQualityProbes(current))
        pool = merge(pool, probes)

        // 4. 4:4:4 at the same size and about the same bytes, for the contenders that gained
        // steeply from finer chroma quantization (where finer chroma buys little, full-resolution
        // chroma does not pay for its bytes either: it lost on every calm photo measured).
        let worst = current.compactMap(\.ssimulacra2).min() ?? 0
        let contenders = current.enumerated().map { index, chosen -> Int? in
            guard let score = chosen.ssimulacra2, score <= worst + Self.contenderMargin,
                let finer = probes[index].first(where: { $0.candidate.chromaOffset > chosen.candidate.chromaOffset }),
                let finerScore = finer.ssimulacra2, finer.bytes > chosen.bytes
            else { return nil }
            let slope = (finerScore - score) / log(Double(finer.bytes) / Double(chosen.bytes))
            return slope >= Self.chromaHungrySlope ? chosen.bytes : nil
        }
        let fullChroma = try await search(
            SearchJob.jobs(
                targets: contenders,
                families: current.map {
                    Candidate.Family(longestSide: $0.candidate.longestSide, chroma: .s444)
                }), known: measured)
        pool = try await merge(pool, scored(fullChroma.map { $0.filter { $0.reaches(ssim: ssimFloor) } }))
        current = allocator.choose(from: pool, objective: objective) ?? current

        // 5. Levelling again, along luma or along the chroma step that measured cheaper.
        (pool, current) = try await levelled(current, pool: pool, measured: measured, ssimFloor: ssimFloor)
        return current
    }

    /// `rebalancingRounds` of levelling from `current`: the grown pool and the new choice.
    private func levelled(
        _ startChoice: [Evaluation], pool start: [[Evaluation]], measured: [[Evaluation]],
        ssimFloor: Double
    ) async throws(UploadBudgetError) -> (pool: [[Evaluation]], choice: [Evaluation]) {
        var (pool, current) = (start, startChoice)
        for _ in 0..<Self.rebalancingRounds {
            guard let moved = try await rebalancingProbes(current, pool: pool, measured: measured, ssimFloor: ssimFloor) else { break }
            pool = try await merge(pool, scored(moved.map { $0.filter { $0.reaches(ssim: ssimFloor) } }))
            let next = allocator.choose(from: pool, objective: objective) ?? current
            if next.map(\.candidate) == current.map(\.candidate) { break }
            current = next
        }
        return (pool, current)
    }

    /// Each colour JPEG at its luma quality with chroma `chromaStep` finer or coarser. Luma is
    /// coded alone, so its SSIM does not move; SSIMULACRA2 gains more per byte from finer
    /// chroma than from finer luma on most photos at these rates, and an image far above the
    /// worst gives chroma bytes away without losing luma detail.
    private func chromaQualityProbes(_ current: [Evaluation]) async throws(UploadBudgetError) -> [[Evaluation]] {
        let worst = current.compactMap(\.ssimulacra2).min() ?? 0
        let candidates = current.enumerated().map { index, chosen -> [Candidate] in
            // Only a colour JPEG has chroma tables (what the result reports as its chroma).
            guard UploadCompressor.chroma(of: chosen, store.images[index].display) != nil else { return [] }
            // Coarser chroma costs about as many points as `chromaStep` finer gains: only an
            // image well above the worst can give; only one near it needs to receive.
            let score = chosen.ssimulacra2 ?? worst
            let steps =
                (score >= worst + Self.contenderMargin / 2 ? [-Self.chromaStep] : [])
                + (score <= worst + Self.contenderMargin ? [Self.chromaStep] : [])
            return steps.map(chosen.candidate.steppingChroma)
        }
        return try await perImage(candidates) { (requests) throws(UploadBudgetError) in
            try await store.evaluate(requests, measuringSSIM: measuresSSIM)
        }
    }

    /// Candidates at the bytes that would level every image's SSIMULACRA2 (water filling on
    /// a local model, score = a + slope · ln bytes, fitted to the two measured points nearest
    /// the current choice, or `priorSlope` with one), each no lower than keeps its luma SSIM
    /// above the floor; images that would grow also get a candidate at their next larger size
    /// (SSIMULACRA2, scored at display size, punishes a small output more than SSIM does).
    /// Nil when nothing would move.
    private func rebalancingProbes(
        _ current: [Evaluation], pool: [[Evaluation]], measured: [[Evaluation]],
        ssimFloor: Double
    ) async throws(UploadBudgetError) -> [[Evaluation]]? {
        let known = zip(measured, pool).map { $0 + $1 }
        // Per image: the local model, and the chroma offset to move along where a measured
        // chroma step is the better way (finer chroma gaining more per byte than luma when
        // growing, coarser chroma losing less per byte when shrinking).
        let models = current.indices.map { index -> Model? in
            let chosen = current[index]
            guard chosen.candidate.quality != nil, let score = chosen.ssimulacra2 else { return nil }
            let family = pool[index].filter {
                $0.candidate.family == chosen.candidate.family && $0.candidate != chosen.candidate && $0.ssimulacra2 != nil
            }
            var slope = Self.priorSlope
            if let near = family.min(by: { abs(log(Double($0.bytes) / Double(chosen.bytes))) < abs(log(Double($1.bytes) / Double(chosen.bytes))) }) {
                let fitted = (near.ssimulacra2! - score) / log(Double(near.bytes) / Double(chosen.bytes))
                if fitted.isFinite && fitted > 1 { slope = fitted }
            }
            var model = Model(
                score: score, bytes: Double(chosen.bytes), up: slope, down: slope,
                lowest: min(Self.bytes(atSSIM: ssimFloor, of: known[index], like: chosen.candidate) ?? Double(chosen.bytes), Double(chosen.bytes)))
            for step in [Self.chromaStep, -Self.chromaStep] {
                let stepped = chosen.candidate.steppingChroma(by: step)
                guard let probe = pool[index].first(where: { $0.candidate == stepped }), let probeScore = probe.ssimulacra2 else { continue }
                let chromaSlope = (probeScore - score) / log(Double(probe.bytes) / Double(chosen.bytes))
                guard chromaSlope.isFinite, chromaSlope > 1 else { continue }
                if step > 0, chromaSlope > model.up {
                    (model.up, model.finer) = (chromaSlope, stepped.chromaOffset)
                } else if step < 0, chromaSlope < model.down {
                    (model.down, model.coarser, model.lowest) = (chromaSlope, stepped.chromaOffset, min(model.lowest, Double(probe.bytes)))
                }
            }
            return model
        }
        let fixed = zip(current, models).reduce(0) { $0 + ($1.1 == nil ? $1.0.bytes : 0) }
        func bytes(at level: Double) -> [Double?] {
            models.map { model in
                model.map { min(max($0.bytes * exp((level - $0.score) / (level > $0.score ? $0.up : $0.down)), $0.lowest), 3 * $0.bytes) }
            }
        }
        // The highest level whose bytes fit: bisection, as total bytes only grow with it.
        var (low, high) = (-50.0, 100.0)
        for _ in 0..<40 {
            let middle = (low + high) / 2
            let total = Double(fixed) + bytes(at: middle).reduce(0) { $0 + ($1 ?? 0) }
            if total <= Double(options.budget) { low = middle } else { high = middle }
        }
        let levelled = bytes(at: low)
        var sameSize: [Int?] = current.map { _ in nil }
        var largerTargets: [Int?] = current.map { _ in nil }
        var larger = current.map(\.candidate.family)
        var chromaTargets: [Int?] = current.map { _ in nil }
        var rechroma = current.map(\.candidate.family)
        for (index, target) in levelled.enumerated() {
            guard let target, let model = models[index], abs(target / Double(current[index].bytes) - 1) > Self.minimumMove else { continue }
            sameSize[index] = Int(target)
            let grows = target > Double(current[index].bytes)
            if grows, let side = allocator.sideLadder(store.images[index]).last(where: { $0 > current[index].candidate.longestSide }) {
                larger[index].longestSide = side
                largerTargets[index] = Int(target)
            }
            if let offset = grows ? model.finer : model.coarser {
                rechroma[index].chromaOffset = offset
                chromaTargets[index] = Int(target)
            }
        }
        guard sameSize.contains(where: { $0 != nil }) else { return nil }
        // The same size, the next larger one and the cheaper chroma step, searched together.
        let jobs =
            SearchJob.jobs(targets: sameSize, families: current.map(\.candidate.family))
            + SearchJob.jobs(targets: largerTargets, families: larger) + SearchJob.jobs(targets: chromaTargets, families: rechroma)
        return try await search(jobs, known: known)
    }

    /// One image in the levelling: score = `score` + slope · ln(bytes / `bytes`), with the
    /// slope `up` above its score and `down` below, never below `lowest` bytes.
    private struct Model {
        var score: Double
        var bytes: Double
        var up: Double
        var down: Double
        var lowest: Double
        /// The chroma offset whose measured step made `up` (or `down`), if one did.
        var finer: Int?
        var coarser: Int?
    }

    /// Each image's evaluations with SSIMULACRA2 measured.
    private func scored(_ evaluations: [[Evaluation]]) async throws(UploadBudgetError) -> [[Evaluation]] {
        try await perImage(evaluations) { (requests) throws(UploadBudgetError) in
            try await store.scoringSSIMULACRA2(requests.map { (image: $0.image, evaluation: $0.candidate) })
        }
    }

    /// `work` done on every image's items in one call (so the store runs them all in
    /// parallel), its results grouped back by image.
    private func perImage<Item>(
        _ items: [[Item]], _ work: ([(image: Int, candidate: Item)]) async throws(UploadBudgetError) -> [Evaluation]
    ) async throws(UploadBudgetError) -> [[Evaluation]] {
        let requests = items.enumerated().flatMap { image, list in list.map { (image: image, candidate: $0) } }
        var result: [[Evaluation]] = Array(repeating: [], count: items.count)
        for (request, evaluation) in zip(requests, try await work(requests)) { result[request.image].append(evaluation) }
        return result
    }

    private func merge(_ pool: [[Evaluation]], _ more: [[Evaluation]]) -> [[Evaluation]] {
        zip(pool, more).map { existing, added in
            existing + added.filter { candidate in !existing.contains { $0.candidate == candidate.candidate } }
        }
    }

    /// One search: an image, a byte target and the family (size, chroma) to search in.
    private struct SearchJob {
        var image: Int
        var target: Int
        var family: Candidate.Family

        /// A job for every image with a target, in its family.
        static func jobs(targets: [Int?], families: [Candidate.Family]) -> [SearchJob] {
            targets.enumerated().compactMap { index, target in target.map { SearchJob(image: index, target: $0, family: families[index]) } }
        }
    }

    /// Per job: the highest-quality candidate of its family within the target bytes (the
    /// smallest tried when none fits; none when there was nothing to search from), found by
    /// interpolating log bytes over quality through the measured points (of this family, or
    /// of plain 4:2:0 at that size scaled by how far the first encode lands) — two encodes.
    /// Every job's encodes of a round run together, so independent searches (another size,
    /// another chroma) cost no more rounds than one. Results are grouped by image, in job order.
    private func search(_ jobs: [SearchJob], known: [[Evaluation]]) async throws(UploadBudgetError) -> [[Evaluation]] {
        var tried: [[Evaluation]] = jobs.map { _ in [] }
        for _ in 0..<2 {
            var requests: [(image: Int, candidate: Candidate)] = []
            var asking: [Int] = []
            for (index, job) in jobs.enumerated() {
                let family = job.family
                let own = Self.curve(known[job.image] + tried[index], family: family)
                let quality: Int
                if let own, own.count >= 2 {
                    quality = Self.quality(for: Double(job.target), on: own, range: options.qualityRange)
                } else if let base = Self.curve(known[job.image], family: Candidate.Family(longestSide: family.longestSide)) {
                    // The plain 4:2:0 curve, scaled by how far this family's one encode landed
                    // from it (before any, 4:4:4 is taken to cost about a quarter more at one
                    // quality, and each step of chroma quality half a percent).
                    var scale = (family.chroma == .s444 ? 1.25 : 1.0) * (1 + 0.005 * Double(family.chromaOffset))
                    if let first = own?.first, let baseBytes = Self.bytes(at: first.quality, on: base) { scale = Double(first.bytes) / baseBytes }
                    quality = Self.quality(for: Double(job.target) / scale, on: base, range: options.qualityRange)
                } else if let own {
                    quality = Self.quality(for: Double(job.target), on: own, range: options.qualityRange)
                } else {
                    continue
                }
                let candidate = family.candidate(quality: quality)
                if !tried[index].contains(where: { $0.candidate == candidate }) {
                    requests.append((job.image, candidate))
                    asking.append(index)
                }
            }
            if requests.isEmpty { break }
            for (index, evaluation) in zip(asking, try await store.evaluate(requests, measuringSSIM: measuresSSIM)) {
                tried[index].append(evaluation)
            }
        }
        var found: [[Evaluation]] = store.images.map { _ in [] }
        for (job, tried) in zip(jobs, tried) {
            let fitting = tried.filter { $0.bytes <= job.target }
            if let best = fitting.max(by: { $0.bytes < $1.bytes }) ?? tried.min(by: { $0.bytes < $1.bytes }) { found[job.image].append(best) }
        }
        return found
    }

    /// (quality, bytes) of the JPEG candidates of one family, by quality; nil if none.
    static func curve(_ evaluations: [Evaluation], family: Candidate.Family) -> [(quality: Int, bytes: Int)]? {
        let points = evaluations.filter { $0.candidate.family == family && $0.candidate.quality != nil }
            .map { (quality: $0.candidate.quality!, bytes: $0.bytes) }
        let unique = Dictionary(points.map { ($0.quality, $0.bytes) }, uniquingKeysWith: { first, _ in first })
        return unique.isEmpty ? nil : unique.sorted { $0.key < $1.key }.map { (quality: $0.key, bytes: $0.value) }
    }

    /// The fewest bytes of a measured candidate of `like`'s family whose luma SSIM
    /// reaches `floor`: as low as a donor may go (measured, not interpolated, because SSIM
    /// bends sharply at low qualities); nil when none does.
    static func bytes(atSSIM floor: Double, of evaluations: [Evaluation], like candidate: Candidate) -> Double? {
        evaluations.filter {
            $0.candidate.family == candidate.family && $0.candidate.quality != nil && $0.reaches(ssim: floor)
        }.map { Double($0.bytes) }.min()
    }

    /// Bytes at `quality` on the curve, interpolated on log bytes (extrapolated past its ends).
    static func bytes(at quality: Int, on points: [(quality: Int, bytes: Int)]) -> Double? {
        guard let (low, high) = segment(points, around: { $0.quality <= quality }) else { return points.first.map { Double($0.bytes) } }
        let slope = (log(Double(high.bytes)) - log(Double(low.bytes))) / Double(high.quality - low.quality)
        return exp(log(Double(low.bytes)) + slope * Double(quality - low.quality))
    }

    /// The quality whose interpolated bytes reach `target`, clamped to `range`.
    static func quality(for target: Double, on points: [(quality: Int, bytes: Int)], range: ClosedRange<Int>) -> Int {
        guard let (low, high) = segment(points, around: { Double($0.bytes) <= target }) else {
            // One point: JPEG bytes grow about 3% per quality step in the middle of the range.
            let only = points[0]
            let steps = log(target / Double(only.bytes)) / log(1.03)
            return min(range.upperBound, max(range.lowerBound, only.quality + Int(steps.rounded(.down))))
        }
        let slope = (log(Double(high.bytes)) - log(Double(low.bytes))) / Double(high.quality - low.quality)
        let quality = slope > 0 ? Double(low.quality) + (log(target) - log(Double(low.bytes))) / slope : Double(low.quality)
        return min(range.upperBound, max(range.lowerBound, Int(quality.rounded(.down))))
    }

    /// The two neighbouring points around where `isBelow` turns false (the end segment when it
    /// never or always holds); nil with fewer than two points.
    private static func segment(
        _ points: [(quality: Int, bytes: Int)], around isBelow: ((quality: Int, bytes: Int)) -> Bool
    ) -> ((quality: Int, bytes: Int), (quality: Int, bytes: Int))? {
        guard points.count >= 2 else { return nil }
        let upper = min(max(points.firstIndex { !isBelow($0) } ?? points.count - 1, 1), points.count - 1)
        return (points[upper - 1], points[upper])
    }
}
