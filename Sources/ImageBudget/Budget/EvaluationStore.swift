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
    /// SSIMULACRA2 scores already measured.
    private var colourScores: [Key: Double] = [:]
    /// SSIMULACRA2 references, built when an image is first scored in colour and kept for the
    /// rest of the search (about 45 MB each at 1280×853; building one costs half a score).
    private var colourReferences: [Int: SSIMULACRA2.Reference] = [:]

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
                throw Self.failure(of: key.image, image, error)
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
                throw Self.failure(of: job.0.image, job.1, error)
            }
        }
        lock.withLock { for (key, bitmap) in zip(keys, bitmaps) { scaled[key] = bitmap } }
    }

    /// A codec error while working on image `index`, as the compressor reports a source's failure.
    private static func failure(of index: Int, _ image: PreparedImage, _ error: ImageCodecError) -> UploadBudgetError {
        .sourceFailures([UploadSourceFailure(index: index, name: image.name, error: error)])
    }

    func evaluate(image: Int, _ candidate: Candidate) async throws(UploadBudgetError) -> Evaluation {
        try await evaluate([(image, candidate)])[0]
    }

    /// The evaluations with their SSIMULACRA2 filled in, in request order; each measured once.
    /// Images run in parallel.
    func scoringSSIMULACRA2(_ requests: [(image: Int, evaluation: Evaluation)]) async throws(UploadBudgetError) -> [Evaluation] {
        var pending: [Int: [Evaluation]] = [:]
        lock.withLock {
            for request in requests where colourScores[Key(image: request.image, candidate: request.evaluation.candidate)] == nil {
                let known = pending[request.image, default: []]
                if !known.contains(where: { $0.candidate == request.evaluation.candidate }) {
                    pending[request.image] = known + [request.evaluation]
                }
            }
        }
        let jobs = pending.sorted { $0.key < $1.key }.map { image, evaluations in
            (image: image, prepared: images[image], evaluations: evaluations, reference: lock.withLock { colourReferences[image] })
        }
        let scored = try await concurrentMap(jobs) { (job) throws(UploadBudgetError) -> (SSIMULACRA2.Reference, [Double]) in
            do throws(ImageCodecError) {
                let reference = job.reference ?? SSIMULACRA2.Reference(job.prepared.display)
                var scores: [Double] = []
                for evaluation in job.evaluations { scores.append(try job.prepared.ssimulacra2(of: evaluation.data, reference: reference)) }
                return (reference, scores)
            } catch {
                throw Self.failure(of: job.image, job.prepared, error)
            }
        }
        return lock.withLock {
            for (job, (reference, jobScores)) in zip(jobs, scored) {
                colourReferences[job.image] = reference
                for (evaluation, score) in zip(job.evaluations, jobScores) {
                    colourScores[Key(image: job.image, candidate: evaluation.candidate)] = score
                }
            }
            return requests.map { request in
                var evaluation = request.evaluation
                evaluation.ssimulacra2 = colourScores[Key(image: request.image, candidate: evaluation.candidate)]
                return evaluation
            }
        }
    }
}
