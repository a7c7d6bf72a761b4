import Foundation

/// Chooses a size and quality for every image so the total fits the budget, maximising the
/// worst image's SSIM first and then the mean.
///
/// 1. Every image is encoded on a coarse grid of sizes × qualities (in parallel) and scored.
///    This also gives the floor: the smallest size at the lowest quality.
/// 2. From those points, per image and size, quality→SSIM and quality→bytes are interpolated,
///    and a common SSIM target is found by bisection: the highest target whose cheapest
///    way per image (any size) still fits the budget together. Plain images reach a target
///    cheaply at a smaller size, which leaves bytes for busy images to keep their quality.
/// 3. The chosen encodes are made for real; while over budget, the image with the most slack
///    steps down. Then leftover bytes go, one step at a time, to the worst-scoring image that
///    can still take a step.
struct BudgetAllocator {
    let options: UploadBudgetOptions
    let store: EvaluationStore

    private var images: [PreparedImage] { store.images }

    func allocate() async throws(UploadBudgetError) -> [Evaluation] {
        let ladders = images.map(sideLadder)
        let grid = qualityGrid
        var requests: [(image: Int, candidate: Candidate)] = []
        for (index, ladder) in ladders.enumerated() {
            for side in ladder { for quality in grid { requests.append((index, Candidate(longestSide: side, quality: quality))) } }
        }
        let evaluations = try await store.evaluate(requests)
        let curves = Dictionary(grouping: evaluations.indices, by: { requests[$0].image }).mapValues { indices in
            Dictionary(grouping: indices.map { evaluations[$0] }, by: \.candidate.longestSide)
                .mapValues { QualityCurve(points: $0) }
        }

        let floor = try await store.evaluate(ladders.indices.map { ($0, Candidate(longestSide: ladders[$0].last ?? options.minPixelSize, quality: grid[0])) })
        let smallest = floor.reduce(0) { $0 + $1.bytes }
        guard smallest <= options.budget else {
            throw .budgetUnreachable(budget: options.budget, smallestTotal: smallest)
        }

        let target = commonTarget(curves: curves)
        var chosen = try await store.evaluate(images.indices.map { index in
            (index, cheapestCandidate(for: target, curves: curves[index] ?? [:]) ?? floor[index].candidate)
        })
        chosen = try await repairOverBudget(chosen, ladders: ladders, floor: floor)
        return try await spendLeftover(chosen, ladders: ladders)
    }

    // MARK: - Grid

    /// Longest sides to try, largest first: full display size down to the minimum.
    func sideLadder(_ image: PreparedImage) -> [Int] {
        let longest = max(image.display.width, image.display.height)
        let minimum = min(options.minPixelSize, longest)
        let steps = [1.0, 0.75, 0.5].map { Int((Double(options.maxPixelSize) * $0).rounded()) }
        let sides = (steps.map { min(longest, max(minimum, $0)) } + [minimum])
        return Array(Set(sides)).sorted(by: >)
    }

    /// Four qualities spread over the allowed range (the curves between them are smooth
    /// enough to interpolate; every chosen point is then encoded for real).
    var qualityGrid: [Int] {
        let (low, high) = (options.qualityRange.lowerBound, options.qualityRange.upperBound)
        return Array(Set((0...3).map { low + (high - low) * $0 / 3 })).sorted()
    }

    // MARK: - Common target

    /// Highest SSIM target whose estimated cheapest total fits the budget.
    private func commonTarget(curves: [Int: [Int: QualityCurve]]) -> Double {
        var (low, high) = (0.0, 1.0)
        for _ in 0..<40 {
            let middle = (low + high) / 2
            let total = images.indices.reduce(0.0) { sum, index in
                sum + (estimatedCost(for: middle, curves: curves[index] ?? [:])?.bytes ?? .infinity)
            }
            if total <= Double(options.budget) * 0.98 { low = middle } else { high = middle }
        }
        return low
    }

    private func estimatedCost(for target: Double, curves: [Int: QualityCurve]) -> (candidate: Candidate, bytes: Double)? {
        curves.compactMap { side, curve -> (Candidate, Double)? in
            guard let quality = curve.quality(reaching: target) else { return nil }
            let rounded = min(options.qualityRange.upperBound, Int(quality.rounded(.up)))
            return (Candidate(longestSide: side, quality: rounded), curve.bytes(at: quality))
        }
        .min { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0.longestSide > $1.0.longestSide) }
    }

    private func cheapestCandidate(for target: Double, curves: [Int: QualityCurve]) -> Candidate? {
        estimatedCost(for: target, curves: curves)?.candidate
    }

    // MARK: - Repair and refinement

    /// One step down: lower quality, or the next smaller size at the same quality.
    private func stepDown(_ candidate: Candidate, ladder: [Int]) -> Candidate? {
        let quality = candidate.quality ?? options.qualityRange.upperBound
        if quality - 3 >= options.qualityRange.lowerBound {
            return Candidate(longestSide: candidate.longestSide, quality: quality - 3)
        }
        guard let position = ladder.firstIndex(of: candidate.longestSide), position + 1 < ladder.count else { return nil }
        return Candidate(longestSide: ladder[position + 1], quality: quality)
    }

    /// One step up: higher quality, or the next larger size at the same quality.
    private func stepUp(_ candidate: Candidate, ladder: [Int]) -> Candidate? {
        let quality = candidate.quality ?? options.qualityRange.upperBound
        if quality + 3 <= options.qualityRange.upperBound {
            return Candidate(longestSide: candidate.longestSide, quality: quality + 3)
        }
        guard let position = ladder.firstIndex(of: candidate.longestSide), position > 0 else { return nil }
        return Candidate(longestSide: ladder[position - 1], quality: quality)
    }

    private func repairOverBudget(_ start: [Evaluation], ladders: [[Int]], floor: [Evaluation]) async throws(UploadBudgetError) -> [Evaluation] {
        var chosen = start
        for _ in 0..<60 where chosen.reduce(0, { $0 + $1.bytes }) > options.budget {
            // The image with the most slack gives up a step.
            let order = chosen.indices.sorted { chosen[$0].score > chosen[$1].score }
            guard let index = order.first(where: { stepDown(chosen[$0].candidate, ladder: ladders[$0]) != nil }),
                  let lower = stepDown(chosen[index].candidate, ladder: ladders[index]) else { break }
            chosen[index] = try await store.evaluate(image: index, lower)
        }
        // The floor is known to fit; it is the answer of last resort.
        return chosen.reduce(0, { $0 + $1.bytes }) <= options.budget ? chosen : floor
    }

    private func spendLeftover(_ start: [Evaluation], ladders: [[Int]]) async throws(UploadBudgetError) -> [Evaluation] {
        var chosen = start
        var blocked = Set<Int>()
        while blocked.count < chosen.count {
            let total = chosen.reduce(0) { $0 + $1.bytes }
            let open = chosen.indices.filter { !blocked.contains($0) }
            let upgrades = open.compactMap { index in stepUp(chosen[index].candidate, ladder: ladders[index]).map { (index, $0) } }
            blocked.formUnion(Set(open).subtracting(upgrades.map(\.0)))
            guard !upgrades.isEmpty else { break }
            let evaluated = try await store.evaluate(upgrades.map { (image: $0.0, candidate: $0.1) })
            // Worst image first, as many upgrades as fit; one that does not fit (or does not
            // help) blocks its image.
            let ranked = zip(upgrades.map(\.0), evaluated).sorted { chosen[$0.0].score < chosen[$1.0].score }
            var running = total
            for (index, upgrade) in ranked {
                if running - chosen[index].bytes + upgrade.bytes <= options.budget && upgrade.score >= chosen[index].score {
                    running += upgrade.bytes - chosen[index].bytes
                    chosen[index] = upgrade
                } else {
                    blocked.insert(index)
                }
            }
        }
        return chosen
    }
}

/// SSIM and bytes against JPEG quality for one image at one size, from a few measured points.
struct QualityCurve {
    /// (quality, score, bytes), by quality, with score and bytes made non-decreasing.
    private let points: [(quality: Double, score: Double, bytes: Double)]

    init(points evaluations: [Evaluation]) {
        var points: [(quality: Double, score: Double, bytes: Double)] = []
        for evaluation in evaluations.sorted(by: { ($0.candidate.quality ?? 100) < ($1.candidate.quality ?? 100) }) {
            let previous = points.last
            points.append((Double(evaluation.candidate.quality ?? 100), max(evaluation.score, previous?.score ?? -1),
                           max(Double(evaluation.bytes), previous?.bytes ?? 0)))
        }
        self.points = points
    }

    /// Lowest quality whose interpolated score reaches `target`; nil if none does.
    func quality(reaching target: Double) -> Double? {
        guard let first = points.first else { return nil }
        if first.score >= target { return first.quality }
        for (low, high) in zip(points, points.dropFirst()) where high.score >= target {
            let fraction = high.score > low.score ? (target - low.score) / (high.score - low.score) : 1
            return low.quality + fraction * (high.quality - low.quality)
        }
        return nil
    }

    /// Bytes at `quality`, interpolated on a log scale (JPEG size grows roughly exponentially).
    func bytes(at quality: Double) -> Double {
        guard let first = points.first, let last = points.last else { return .infinity }
        if quality <= first.quality { return first.bytes }
        if quality >= last.quality { return last.bytes }
        for (low, high) in zip(points, points.dropFirst()) where quality <= high.quality {
            let fraction = (quality - low.quality) / (high.quality - low.quality)
            return exp(log(max(low.bytes, 1)) + fraction * (log(max(high.bytes, 1)) - log(max(low.bytes, 1))))
        }
        return last.bytes
    }
}
