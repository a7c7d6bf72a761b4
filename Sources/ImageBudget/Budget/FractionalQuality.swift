/// Spends what the integer qualities leave of the budget: the search chooses among integer
/// qualities, so a set often stops a few kilobytes short of its budget, the next step of the
/// image that would gain most being just too large. The perceptual encoder's tables are
/// continuous in quality, so that image can take a fraction of the step instead.
///
/// The worst-scoring JPEG (the one the max-min objective cares for) is raised by tenths of a
/// quality step, bisected over 1...10 tenths with at most four encodes; a tenth is kept only
/// if the set still fits and the image's score does not drop. libjpeg-turbo's integer tables
/// have nothing between two qualities, so its sets are left as they are.
struct FractionalQuality {
    let options: UploadBudgetOptions
    let store: EvaluationStore

    /// `chosen` with its worst JPEG raised into the leftover bytes, when a fraction fits.
    func fill(_ chosen: [Evaluation]) async throws(UploadBudgetError) -> [Evaluation] {
        guard options.jpegEncoder == .perceptual else { return chosen }
        let leftover = options.budget - chosen.reduce(0) { $0 + $1.bytes }
        let scored = try await scoring(chosen.enumerated().map { (image: $0, evaluation: $1) })
        guard
            let worst = scored.indices.filter({ index in
                scored[index].candidate.quality.map { $0 < options.qualityRange.upperBound } ?? false
            }).min(by: { score(scored[$0]) < score(scored[$1]) })
        else { return scored }
        let base = scored[worst]
        var best = base
        // Tenths in 1...10 (10: the next integer quality), bisected for the most that fits.
        var (low, high) = (0, 11)
        while high - low > 1 {
            let tenths = (low + high) / 2
            var candidate = base.candidate
            candidate.tenths = tenths
            if tenths == 10 {
                candidate.quality! += 1
                candidate.tenths = 0
            }
            let evaluation = try await store.evaluate(image: worst, candidate, measuringSSIM: options.metric == .ssim)
            if evaluation.bytes - base.bytes <= leftover {
                low = tenths
                best = evaluation
            } else {
                high = tenths
            }
        }
        guard best.candidate != base.candidate else { return scored }
        let raised = try await scoring([(image: worst, evaluation: best)])[0]
        guard score(raised) >= score(base) else { return scored }
        var result = scored
        result[worst] = raised
        return result
    }

    /// The score the set's objective uses: SSIMULACRA2 when it is the metric, else luma SSIM.
    private func score(_ evaluation: Evaluation) -> Double {
        (options.metric == .ssimulacra2 ? evaluation.ssimulacra2 : evaluation.ssim) ?? -.infinity
    }

    private func scoring(_ requests: [(image: Int, evaluation: Evaluation)]) async throws(UploadBudgetError) -> [Evaluation] {
        options.metric == .ssimulacra2 ? try await store.scoringSSIMULACRA2(requests) : requests.map(\.evaluation)
    }
}
