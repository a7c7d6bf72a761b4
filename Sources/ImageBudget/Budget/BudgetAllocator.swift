import Foundation

/// Chooses a size and quality for every image so the total fits the budget: first the
/// highest worst-image SSIM, then (within `worstDistortionSlack` of it) the highest mean.
/// (With SSIMULACRA2 as the metric, `ChromaRefinement` then starts from this choice.)
///
/// Only measured candidates are ever chosen, so the total is exact, never estimated.
/// 1. Every image is encoded on a coarse grid of sizes × qualities (in parallel) and scored
///    at display size. The grid's smallest size at the lowest quality is the floor; if the
///    floors do not fit, the budget is unreachable.
/// 2. Over the measured candidates: the best achievable worst score `t*` (the highest t for
///    which each image's cheapest candidate scoring ≥ t fits the budget together), then a
///    multiple-choice knapsack (dynamic programming over bytes) maximising the sum of scores
///    with every image ≥ 1 − (1 − `t*`)·(1 + slack). Plain images reach a score cheaply at a smaller
///    size, so busy images keep their quality.
/// 3. Candidates next to each chosen one (nearby qualities, neighbouring sizes) are measured
///    and step 2 runs again, until nothing new is worth measuring.
struct BudgetAllocator {
    let options: UploadBudgetOptions
    let store: EvaluationStore

    /// Knapsack byte granularity: sizes are rounded up to it, so the chosen total can only be
    /// overestimated, never exceed the budget.
    private static let byteUnit = 256

    /// The chosen evaluations (one per image) and every candidate measured on the way.
    func allocate() async throws(UploadBudgetError) -> (choice: [Evaluation], measured: [[Evaluation]]) {
        let ladders = store.images.map(sideLadder)
        var measured: [[Evaluation]] = Array(repeating: [], count: ladders.count)
        var requests: [(image: Int, candidate: Candidate)] = []
        for (index, ladder) in ladders.enumerated() {
            for side in ladder { for quality in qualityGrid { requests.append((index, Candidate(longestSide: side, quality: quality))) } }
        }
        // Grid, then up to four rounds of refinement; each round measures, then chooses.
        var choice: [Evaluation] = []
        for round in 0..<5 {
            let evaluations = try await store.evaluate(requests)
            for (request, evaluation) in zip(requests, evaluations)
            where !measured[request.image].contains(where: {
                $0.candidate == evaluation.candidate
            }) {
                measured[request.image].append(evaluation)
            }
            guard let chosen = choose(from: measured, objective: .ssim(slack: options.worstDistortionSlack)) else {
                let smallest = measured.reduce(0) { $0 + ($1.map(\.bytes).min() ?? 0) }
                throw .budgetUnreachable(budget: options.budget, smallestTotal: smallest)
            }
            choice = chosen
            guard round < 4 else { break }
            requests = neighbours(of: choice, measured: measured, ladders: ladders)
            if requests.isEmpty { break }
        }
        return (choice, measured)
    }

    // MARK: - Grid

    /// Longest sides to try, largest first: full display size down to the minimum.
    func sideLadder(_ image: PreparedImage) -> [Int] {
        let longest = max(image.display.width, image.display.height)
        let minimum = min(options.minPixelSize, longest)
        let steps = [1.0, 0.75, 0.5].map { Int((Double(options.maxPixelSize) * $0).rounded()) }
        let sides = steps.map { min(longest, max(minimum, $0)) } + [minimum]
        return Array(Set(sides)).sorted(by: >)
    }

    /// Three qualities spread over the allowed range; bisection fills in between.
    var qualityGrid: [Int] {
        let (low, high) = (options.qualityRange.lowerBound, options.qualityRange.upperBound)
        return Array(Set((0...2).map { low + (high - low) * $0 / 2 })).sorted()
    }

    /// Unmeasured candidates worth measuring next, found by bisection on quality per size:
    /// at the chosen size, between the measured qualities around "this image's bytes plus
    /// all the leftover" and next to the chosen quality; at the other sizes, around the
    /// chosen bytes (is another size better at the same cost?).
    private func neighbours(of choice: [Evaluation], measured: [[Evaluation]], ladders: [[Int]]) -> [(image: Int, candidate: Candidate)] {
        let leftover = options.budget - choice.reduce(0) { $0 + $1.bytes }
        var result: [(image: Int, candidate: Candidate)] = []
        for (index, chosen) in choice.enumerated() {
            guard let quality = chosen.candidate.quality else { continue }
            var wanted: [Candidate] = []
            for side in ladders[index] {
                let points = measured[index].filter { $0.candidate.longestSide == side && $0.candidate.quality != nil }
                    .sorted { $0.candidate.quality! < $1.candidate.quality! }
                let targets = side == chosen.candidate.longestSide ? [chosen.bytes + leftover] : [chosen.bytes]
                for target in targets {
                    let below = points.last { $0.bytes <= target }?.candidate.quality
                    let above = points.first { $0.bytes > target }?.candidate.quality
                    if let below, let above, above - below > 1 {
                        wanted.append(Candidate(longestSide: side, quality: (below + above) / 2))
                    }
                }
            }
            for delta in [-2, 2] where options.qualityRange.contains(quality + delta) {
                wanted.append(Candidate(longestSide: chosen.candidate.longestSide, quality: quality + delta))
            }
            result += wanted.filter { candidate in !measured[index].contains { $0.candidate == candidate } }.map { (index, $0) }
        }
        return result
    }

    // MARK: - Choice over measured candidates

    /// The best choice among measured candidates by `objective`, or nil when even the cheapest
    /// do not fit. Every candidate in `measured` must have the objective's score.
    func choose(from measured: [[Evaluation]], objective: Objective) -> [Evaluation]? {
        guard let worst = bestWorstScore(measured, objective) else { return nil }
        // The knapsack rounds sizes up, so it can miss a choice that fits with bytes to spare
        // only in rounding; the max-min choice itself is exact and always fits.
        return maximumSum(measured, objective, floor: objective.floor(worst.score)) ?? worst.choice
    }

    /// The highest t such that, for every image, the cheapest candidate scoring ≥ t fits
    /// the budget together with the others', and that choice.
    private func bestWorstScore(_ measured: [[Evaluation]], _ objective: Objective) -> (score: Double, choice: [Evaluation])? {
        let thresholds = Set(measured.flatMap { $0.map(objective.score) }).sorted(by: >)
        for threshold in thresholds {
            let choice = measured.compactMap { candidates in
                candidates.filter { objective.score($0) >= threshold }
                    .min { ($0.bytes, $0.candidate.longestSide) < ($1.bytes, $1.candidate.longestSide) }
            }
            if choice.count == measured.count && choice.reduce(0, { $0 + $1.bytes }) <= options.budget {
                return (threshold, choice)
            }
        }
        return nil
    }

    /// Multiple-choice knapsack: one candidate per image, each scoring ≥ `floor`, total bytes
    /// ≤ budget, maximum sum of scores. Ties go to fewer bytes, then to input order, so the
    /// result is deterministic.
    private func maximumSum(_ measured: [[Evaluation]], _ objective: Objective, floor: Double) -> [Evaluation]? {
        let capacity = options.budget / Self.byteUnit
        let units = { (evaluation: Evaluation) in (evaluation.bytes + Self.byteUnit - 1) / Self.byteUnit }
        // best[c] = highest score sum with exactly c units used so far; choices remember the path.
        var best = [Double](repeating: -.infinity, count: capacity + 1)
        best[0] = 0
        var picks: [[Int]] = []
        for candidates in measured {
            let eligible = candidates.indices.filter { objective.score(candidates[$0]) >= floor }
                .sorted { (candidates[$0].bytes, $0) < (candidates[$1].bytes, $1) }
            var next = [Double](repeating: -.infinity, count: capacity + 1)
            var pick = [Int](repeating: -1, count: capacity + 1)
            for used in 0...capacity where best[used] > -.infinity {
                for candidate in eligible {
                    let total = used + units(candidates[candidate])
                    guard total <= capacity else { continue }
                    let value = best[used] + objective.score(candidates[candidate])
                    if value > next[total] + 1e-12 {
                        next[total] = value
                        pick[total] = candidate
                    }
                }
            }
            picks.append(pick)
            best = next
        }
        // Highest sum; among equal sums the fewest bytes.
        guard
            let end = best.indices.filter({ best[$0] > -.infinity }).max(by: {
                best[$0] < best[$1] - 1e-12 || (abs(best[$0] - best[$1]) <= 1e-12 && $0 > $1)
            })
        else { return nil }
        var chosen: [Evaluation] = []
        var used = end
        for (image, pick) in zip(measured.indices, picks).reversed() {
            let candidate = pick[used]
            guard candidate >= 0 else { return nil }
            chosen.append(measured[image][candidate])
            used -= units(measured[image][candidate])
        }
        return chosen.reversed()
    }
}

/// What a choice maximises: each candidate's score, and how low the knapsack may let the worst
/// image go below the best achievable worst score so that the sum gains more.
struct Objective {
    var score: (Evaluation) -> Double
    var floor: (Double) -> Double

    /// Luma SSIM, the worst image allowed `slack` more relative distortion (1 − SSIM).
    static func ssim(slack: Double) -> Objective {
        Objective(score: { $0.ssim ?? -.infinity }, floor: { 1 - (1 - $0) * (1 + slack) })
    }

    /// SSIMULACRA2 (measured), the worst image allowed 5 × `slack` points below the best.
    static func ssimulacra2(slack: Double) -> Objective {
        Objective(score: { $0.ssimulacra2 ?? -.infinity }, floor: { $0 - 5 * slack })
    }
}
