import Foundation
import ImageCodec

/// The SSIMULACRA2 stage of the allocation: starting from the SSIM choice, it chooses each
/// JPEG's chroma resolution and moves bytes towards the images SSIMULACRA2 scores worst.
///
/// SSIMULACRA2 costs about ten times as much per candidate as SSIM, so the search over sizes
/// and qualities stays on SSIM (which ranks sizes and qualities of one image as SSIMULACRA2
/// does) and SSIMULACRA2 is measured only where it can change the outcome:
/// 1. every chosen candidate (the result reports it anyway);
/// 2. for the images within `contenderMargin` of the worst, the same size in 4:4:4 at about
///    the same bytes (found by encoding, which is cheap, and interpolating bytes over quality);
///    busy images keep colour edges with 4:4:4 and gain several points, calm ones lose;
/// 3. after a max-min choice over those, a levelling round: water filling on a local model of
///    each image's score over bytes gives each the bytes that would bring all to one level;
///    the images that would grow are also tried at their next larger size.
/// The final choice is the allocator's max-min then knapsack over the measured candidates, on
/// SSIMULACRA2. No candidate may lose more than `ssimAllowance` of luma SSIM below the SSIM
/// choice's worst image, so the colour gain never costs visible luma detail.
struct ChromaRefinement {
    let options: UploadBudgetOptions
    let store: EvaluationStore

    /// Points above the worst image within which an image may become the worst after a
    /// chroma change (4:4:4 moves a score by about ±4-7).
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
    /// How far below the SSIM choice's worst luma SSIM a candidate may go.
    static let ssimAllowance = 0.009

    /// The refined choice; `choice` and `measured` come from ``BudgetAllocator``.
    func refine(_ choice: [Evaluation], measured: [[Evaluation]]) async throws(UploadBudgetError) -> [Evaluation] {
        let allocator = BudgetAllocator(options: options, store: store)
        let objective = Objective.ssimulacra2(slack: options.worstDistortionSlack)
        let ssimFloor = (choice.map(\.ssim).min() ?? 0) - Self.ssimAllowance
        var pool = try await scored(choice.enumerated().map { [$1] })
        var current = pool.map { $0[0] }
        let worst = current.compactMap(\.ssimulacra2).min() ?? 0

        // 2. 4:4:4 at the same size and about the same bytes, for the contenders. A gray image
        // is one JPEG component: it has no chroma to choose.
        let contenders = current.enumerated().map { index, chosen -> Int? in
            let contends = chosen.candidate.quality != nil && !store.images[index].display.format.isGray
                && (chosen.ssimulacra2 ?? 0) <= worst + Self.contenderMargin
            return contends ? chosen.bytes : nil
        }
        let fullChroma = try await search(targets: contenders, side: current.map(\.candidate.longestSide),
                                          chroma: current.map { _ in .s444 }, known: measured)
        pool = try await merge(pool, scored(fullChroma.map { [$0].compactMap { $0 }.filter { $0.ssim >= ssimFloor } }))
        current = allocator.choose(from: pool, objective: objective) ?? current

        // 3. Rebalancing rounds towards the worst images.
        for _ in 0..<Self.rebalancingRounds {
            guard let moved = try await rebalancingProbes(current, pool: pool, measured: measured, ssimFloor: ssimFloor) else { break }
            pool = try await merge(pool, scored(moved.map { $0.filter { $0.ssim >= ssimFloor } }))
            let next = allocator.choose(from: pool, objective: objective) ?? current
            if next.map(\.candidate) == current.map(\.candidate) { break }
            current = next
        }
        return current
    }

    /// Candidates at the bytes that would level every image's SSIMULACRA2 (water filling on
    /// a local model, score = a + slope · ln bytes, fitted to the two measured points nearest
    /// the current choice, or `priorSlope` with one), each no lower than keeps its luma SSIM
    /// above the floor; images that would grow also get a candidate at their next larger size
    /// (SSIMULACRA2, scored at display size, punishes a small output more than SSIM does).
    /// Nil when nothing would move.
    private func rebalancingProbes(_ current: [Evaluation], pool: [[Evaluation]], measured: [[Evaluation]],
                                   ssimFloor: Double) async throws(UploadBudgetError) -> [[Evaluation]]? {
        let known = zip(measured, pool).map { $0 + $1 }
        let models = current.indices.map { index -> (score: Double, bytes: Double, slope: Double, lowest: Double)? in
            let chosen = current[index]
            guard chosen.candidate.quality != nil, let score = chosen.ssimulacra2 else { return nil }
            let family = pool[index].filter {
                $0.candidate.longestSide == chosen.candidate.longestSide && $0.candidate.chroma == chosen.candidate.chroma
                    && $0.candidate != chosen.candidate && $0.ssimulacra2 != nil
            }
            var slope = Self.priorSlope
            if let near = family.min(by: { abs(log(Double($0.bytes) / Double(chosen.bytes))) < abs(log(Double($1.bytes) / Double(chosen.bytes))) }) {
                let fitted = (near.ssimulacra2! - score) / log(Double(near.bytes) / Double(chosen.bytes))
                if fitted.isFinite && fitted > 1 { slope = fitted }
            }
            let lowest = Self.bytes(atSSIM: ssimFloor, of: known[index], like: chosen.candidate) ?? Double(chosen.bytes)
            return (score, Double(chosen.bytes), slope, min(lowest, Double(chosen.bytes)))
        }
        let fixed = zip(current, models).reduce(0) { $0 + ($1.1 == nil ? $1.0.bytes : 0) }
        func bytes(at level: Double) -> [Double?] {
            models.map { model in
                model.map { min(max($0.bytes * exp((level - $0.score) / $0.slope), $0.lowest), 3 * $0.bytes) }
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
        var larger: [Int?] = current.map { _ in nil }
        var sides = current.map(\.candidate.longestSide)
        let allocator = BudgetAllocator(options: options, store: store)
        for (index, target) in levelled.enumerated() {
            guard let target, abs(target / Double(current[index].bytes) - 1) > Self.minimumMove else { continue }
            sameSize[index] = Int(target)
            if target > Double(current[index].bytes), let side = allocator.sideLadder(store.images[index]).last(where: { $0 > sides[index] }) {
                sides[index] = side
                larger[index] = Int(target)
            }
        }
        guard sameSize.contains(where: { $0 != nil }) else { return nil }
        let chroma = current.map(\.candidate.chroma)
        let moved = try await search(targets: sameSize, side: current.map(\.candidate.longestSide), chroma: chroma, known: known)
        let enlarged = try await search(targets: larger, side: sides, chroma: chroma, known: known)
        return current.indices.map { [moved[$0], enlarged[$0]].compactMap { $0 } }
    }

    /// Each image's evaluations with SSIMULACRA2 measured.
    private func scored(_ evaluations: [[Evaluation]]) async throws(UploadBudgetError) -> [[Evaluation]] {
        let requests = evaluations.enumerated().flatMap { image, list in list.map { (image: image, evaluation: $0) } }
        var result: [[Evaluation]] = Array(repeating: [], count: evaluations.count)
        for (request, evaluation) in zip(requests, try await store.scoringSSIMULACRA2(requests)) {
            result[request.image].append(evaluation)
        }
        return result
    }

    private func merge(_ pool: [[Evaluation]], _ more: [[Evaluation]]) -> [[Evaluation]] {
        zip(pool, more).map { existing, added in
            existing + added.filter { candidate in !existing.contains { $0.candidate == candidate.candidate } }
        }
    }

    /// Per image with a target: the highest-quality candidate at `side` and `chroma` within the
    /// target bytes, found by interpolating log bytes over quality through the measured points
    /// (of this chroma, or of 4:2:0 scaled by how far the first encode lands) — two encodes.
    private func search(targets: [Int?], side: [Int], chroma: [JPEGEncodingOptions.ChromaSubsampling],
                        known: [[Evaluation]]) async throws(UploadBudgetError) -> [Evaluation?] {
        var tried: [[Evaluation]] = targets.map { _ in [] }
        for _ in 0..<2 {
            var requests: [(image: Int, candidate: Candidate)] = []
            for (index, target) in targets.enumerated() {
                guard let target else { continue }
                let own = Self.curve(known[index] + tried[index], side: side[index], chroma: chroma[index])
                let quality: Int
                if let own, own.count >= 2 {
                    quality = Self.quality(for: Double(target), on: own, range: options.qualityRange)
                } else if let base = Self.curve(known[index], side: side[index], chroma: .s420) {
                    // The 4:2:0 curve, scaled by how far this chroma's one encode landed from it
                    // (before any, 4:4:4 is taken to cost about a quarter more at one quality).
                    var scale = chroma[index] == .s444 ? 1.25 : 1.0
                    if let first = own?.first, let baseBytes = Self.bytes(at: first.quality, on: base) { scale = Double(first.bytes) / baseBytes }
                    quality = Self.quality(for: Double(target) / scale, on: base, range: options.qualityRange)
                } else if let own {
                    quality = Self.quality(for: Double(target), on: own, range: options.qualityRange)
                } else {
                    continue
                }
                let candidate = Candidate(longestSide: side[index], quality: quality, chroma: chroma[index])
                if !tried[index].contains(where: { $0.candidate == candidate }) { requests.append((index, candidate)) }
            }
            if requests.isEmpty { break }
            for (request, evaluation) in zip(requests, try await store.evaluate(requests)) { tried[request.image].append(evaluation) }
        }
        return targets.enumerated().map { index, target in
            guard let target else { return nil }
            let fitting = tried[index].filter { $0.bytes <= target }
            return fitting.max { $0.bytes < $1.bytes } ?? tried[index].min { $0.bytes < $1.bytes }
        }
    }

    /// (quality, bytes) of the JPEG candidates at one size and chroma, by quality; nil if none.
    static func curve(_ evaluations: [Evaluation], side: Int, chroma: JPEGEncodingOptions.ChromaSubsampling) -> [(quality: Int, bytes: Int)]? {
        let points = evaluations.filter { $0.candidate.longestSide == side && $0.candidate.chroma == chroma && $0.candidate.quality != nil }
            .map { (quality: $0.candidate.quality!, bytes: $0.bytes) }
        let unique = Dictionary(points.map { ($0.quality, $0.bytes) }, uniquingKeysWith: { first, _ in first })
        return unique.isEmpty ? nil : unique.sorted { $0.key < $1.key }.map { (quality: $0.key, bytes: $0.value) }
    }

    /// The fewest bytes of a measured candidate of `like`'s size and chroma whose luma SSIM
    /// reaches `floor`: as low as a donor may go (measured, not interpolated, because SSIM
    /// bends sharply at low qualities); nil when none does.
    static func bytes(atSSIM floor: Double, of evaluations: [Evaluation], like candidate: Candidate) -> Double? {
        evaluations.filter {
            $0.candidate.longestSide == candidate.longestSide && $0.candidate.chroma == candidate.chroma && $0.candidate.quality != nil
                && $0.ssim >= floor
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
    private static func segment(_ points: [(quality: Int, bytes: Int)], around isBelow: ((quality: Int, bytes: Int)) -> Bool)
        -> ((quality: Int, bytes: Int), (quality: Int, bytes: Int))? {
        guard points.count >= 2 else { return nil }
        let upper = min(max(points.firstIndex { !isBelow($0) } ?? points.count - 1, 1), points.count - 1)
        return (points[upper - 1], points[upper])
    }
}
