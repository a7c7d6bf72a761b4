import Foundation
import ImageCodec

/// Evaluates candidates in parallel and remembers every result, so the search never encodes
/// the same (image, size, quality) twice.
final class EvaluationStore: @unchecked Sendable {
    // @unchecked: `cache` and `encodes` are only touched while `lock` is held.
    let images: [PreparedImage]
    let quantization: JPEGQuantization
    private let lock = NSLock()
    private var cache: [Key: Evaluation] = [:]
    /// Display bitmaps resized to each candidate size: one resize per size, not per quality.
    private var scaled: [SizeKey: Bitmap] = [:]
    private var encodes = 0

    struct SizeKey: Hashable {
        var image: Int
        var longestSide: Int
    }

    struct Key: Hashable {
        var image: Int
        var candidate: Candidate
    }

    init(images: [PreparedImage], quantization: JPEGQuantization) {
        self.images = images
        self.quantization = quantization
    }

    var encodeCount: Int { lock.withLock { encodes } }

    /// Evaluations for the requested (image, candidate) pairs, in request order.
    func evaluate(_ requests: [(image: Int, candidate: Candidate)]) async throws(UploadBudgetError) -> [Evaluation] {
        let missing = Array(Set(requests.map { Key(image: $0.image, candidate: $0.candidate) })
            .filter { key in lock.withLock { cache[key] == nil } })
        try await prepareSizes(Set(missing.map { SizeKey(image: $0.image, longestSide: $0.candidate.longestSide) }))
        let quantization = quantization
        let jobs = missing.map { key in
            (key, images[key.image], lock.withLock { scaled[SizeKey(image: key.image, longestSide: key.candidate.longestSide)] })
        }
        let evaluations = try await concurrentMap(jobs) { (job) throws(UploadBudgetError) -> Evaluation in
            let (key, image, bitmap) = job
            do throws(ImageCodecError) {
                guard let bitmap else { throw .invalidArgument("size \(key.candidate.longestSide) not prepared") }
                return try image.evaluate(key.candidate, from: bitmap, quantization: quantization)
            } catch {
                throw .sourceFailures([UploadSourceFailure(index: key.image, name: image.name, error: error)])
            }
        }
        lock.withLock {
            for (key, evaluation) in zip(missing, evaluations) { cache[key] = evaluation }
            encodes += evaluations.count
        }
        return lock.withLock { requests.map { cache[Key(image: $0.image, candidate: $0.candidate)]! } }
    }

    /// Resizes the display bitmaps to the sizes not made yet, in parallel.
    private func prepareSizes(_ keys: Set<SizeKey>) async throws(UploadBudgetError) {
        let missing = keys.filter { key in lock.withLock { scaled[key] == nil } }
        let keys = Array(missing)
        let bitmaps = try await concurrentMap(keys.map { ($0, images[$0.image]) }) { (job) throws(UploadBudgetError) -> Bitmap in
            do throws(ImageCodecError) {
                return try job.1.scaled(to: job.0.longestSide)
            } catch {
                throw .sourceFailures([UploadSourceFailure(index: job.0.image, name: job.1.name, error: error)])
            }
        }
        lock.withLock { for (key, bitmap) in zip(keys, bitmaps) { scaled[key] = bitmap } }
    }

    func evaluate(image: Int, _ candidate: Candidate) async throws(UploadBudgetError) -> Evaluation {
        try await evaluate([(image, candidate)])[0]
    }
}
