import Foundation
import ImageCodec

/// Evaluates candidates in parallel and remembers every result, so the search never encodes
/// the same (image, size, quality) twice.
final class EvaluationStore: @unchecked Sendable {
    // @unchecked: `cache` and `encodes` are only touched while `lock` is held.
    let images: [PreparedImage]
    /// The encoder and luma table every candidate is encoded with.
    let encoding: JPEGEncodingOptions
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

    init(images: [PreparedImage], encoding: JPEGEncodingOptions) {
        self.images = images
        self.encoding = encoding
    }

    var encodeCount: Int { lock.withLock { encodes } }

    /// Evaluations for the requested (image, candidate) pairs, in request order. Candidates not
    /// encoded before are encoded now, and scored with luma SSIM when `measuringSSIM` (the
    /// SSIMULACRA2 stage skips it where no SSIM floor applies; ``lumaSSIM(_:)`` measures the
    /// result's later).
    func evaluate(
        _ requests: [(image: Int, candidate: Candidate)], measuringSSIM: Bool = true
    ) async throws(UploadBudgetError) -> [Evaluation] {
        let missing = Array(
            Set(requests.map { Key(image: $0.image, candidate: $0.candidate) })
                .filter { key in lock.withLock { cache[key] == nil } })
        try await prepareSizes(Set(missing.map { SizeKey(image: $0.image, longestSide: $0.candidate.longestSide) }))
        let encoding = encoding
        let jobs = missing.map { key in
            (key, images[key.image], lock.withLock { scaled[SizeKey(image: key.image, longestSide: key.candidate.longestSide)] })
        }
        let evaluations = try await concurrentMap(jobs) { (job) throws(UploadBudgetError) -> Evaluation in
            let (key, image, bitmap) = job
            do throws(ImageCodecError) {
                guard let bitmap else { throw .invalidArgument("size \(key.candidate.longestSide) not prepared") }
                return try image.evaluate(key.candidate, from: bitmap, encoding: encoding, measuringSSIM: measuringSSIM)
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

    /// The luma SSIM of each evaluation, in request order: as measured, or measured now (in
    /// parallel) for those encoded without it.
    func lumaSSIM(_ requests: [(image: Int, evaluation: Evaluation)]) async throws(UploadBudgetError) -> [Double] {
        try await concurrentMap(requests.map { ($0.image, images[$0.image], $0.evaluation) }) { (job) throws(UploadBudgetError) -> Double in
            let (index, image, evaluation) = job
            if let measured = evaluation.ssim { return measured }
            do throws(ImageCodecError) {
                return try image.ssim(of: evaluation.data)
            } catch {
                throw Self.failure(of: index, image, error)
            }
        }
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

    func evaluate(image: Int, _ candidate: Candidate, measuringSSIM: Bool = true) async throws(UploadBudgetError) -> Evaluation {
        try await evaluate([(image, candidate)], measuringSSIM: measuringSSIM)[0]
    }

    /// The evaluations with their SSIMULACRA2 filled in, in request order; each measured once.
    /// The missing references are built first (one per image, in parallel), then every
    /// evaluation is scored in parallel: a probe round is often two per image, and scoring image
    /// by image would leave a core idle behind the last one.
    func scoringSSIMULACRA2(_ requests: [(image: Int, evaluation: Evaluation)]) async throws(UploadBudgetError) -> [Evaluation] {
        var pending: [Key: (image: Int, evaluation: Evaluation)] = [:]
        lock.withLock {
            for request in requests {
                let key = Key(image: request.image, candidate: request.evaluation.candidate)
                if colourScores[key] == nil { pending[key] = request }
            }
        }
        let imagesNeeded = Set(pending.values.map(\.image)).filter { image in lock.withLock { colourReferences[image] == nil } }.sorted()
        let references = try await concurrentMap(imagesNeeded.map { ($0, images[$0]) }) { (job) throws(UploadBudgetError) in
            do throws(ImageCodecError) {
                return try SSIMULACRA2.Reference(job.1.display)
            } catch {
                throw Self.failure(of: job.0, job.1, error)
            }
        }
        lock.withLock { for (image, reference) in zip(imagesNeeded, references) { colourReferences[image] = reference } }
        let jobs = pending.sorted { ($0.value.image, $0.value.evaluation.bytes) < ($1.value.image, $1.value.evaluation.bytes) }.map { key, request in
            (key: key, prepared: images[request.image], data: request.evaluation.data, reference: lock.withLock { colourReferences[request.image]! })
        }
        let scores = try await concurrentMap(jobs) { (job) throws(UploadBudgetError) -> Double in
            do throws(ImageCodecError) {
                return try job.prepared.ssimulacra2(of: job.data, reference: job.reference)
            } catch {
                throw Self.failure(of: job.key.image, job.prepared, error)
            }
        }
        return lock.withLock {
            for (job, score) in zip(jobs, scores) { colourScores[job.key] = score }
            return requests.map { request in
                var evaluation = request.evaluation
                evaluation.ssimulacra2 = colourScores[Key(image: request.image, candidate: evaluation.candidate)]
                return evaluation
            }
        }
    }
}
