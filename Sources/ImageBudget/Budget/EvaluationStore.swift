import Foundation
import ImageCodec

/// Evaluates candidates in parallel and remembers every result, so the search never encodes
/// the same (image, size, quality) twice.
final class EvaluationStore: @unchecked Sendable {
    // @unchecked: `cache` and `encodes` are only touched while `lock` is held.
    let images: [PreparedImage]
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

    init(images: [PreparedImage]) {
        self.images = images
    }

    var encodeCount: Int { lock.withLock { encodes } }

    /// Evaluations for the requested (image, candidate) pairs, in request order.
    func evaluate(_ requests: [(image: Int, candidate: Candidate)]) async throws(UploadBudgetError) -> [Evaluation] {
        let missing = Array(Set(requests.map { Key(image: $0.image, candidate: $0.candidate) })
            .filter { key in lock.withLock { cache[key] == nil } })
        try await prepareSizes(Set(missing.map { SizeKey(image: $0.image, longestSide: $0.candidate.longestSide) }))
        let results = await withTaskGroup(of: (Key, Result<Evaluation, ImageCodecError>).self) { group in
            for key in missing {
                let image = images[key.image]
                let bitmap = lock.withLock { scaled[SizeKey(image: key.image, longestSide: key.candidate.longestSide)] }
                group.addTask {
                    (key, Result { () throws(ImageCodecError) in
                        guard let bitmap else { throw ImageCodecError.invalidArgument("size \(key.candidate.longestSide) not prepared") }
                        return try image.evaluate(key.candidate, from: bitmap)
                    })
                }
            }
            var results: [(Key, Result<Evaluation, ImageCodecError>)] = []
            for await result in group { results.append(result) }
            return results
        }
        for (key, result) in results {
            switch result {
            case .success(let evaluation):
                lock.withLock {
                    cache[key] = evaluation
                    encodes += 1
                }
            case .failure(let error):
                throw .source(name: images[key.image].name, error)
            }
        }
        return lock.withLock { requests.map { cache[Key(image: $0.image, candidate: $0.candidate)]! } }
    }

    /// Resizes the display bitmaps to the sizes not made yet, in parallel.
    private func prepareSizes(_ keys: Set<SizeKey>) async throws(UploadBudgetError) {
        let missing = keys.filter { key in lock.withLock { scaled[key] == nil } }
        let results = await withTaskGroup(of: (SizeKey, Result<Bitmap, ImageCodecError>).self) { group in
            for key in missing {
                let image = images[key.image]
                group.addTask { (key, Result { () throws(ImageCodecError) in try image.scaled(to: key.longestSide) }) }
            }
            var results: [(SizeKey, Result<Bitmap, ImageCodecError>)] = []
            for await result in group { results.append(result) }
            return results
        }
        for (key, result) in results {
            switch result {
            case .success(let bitmap): lock.withLock { scaled[key] = bitmap }
            case .failure(let error): throw .source(name: images[key.image].name, error)
            }
        }
    }

    func evaluate(image: Int, _ candidate: Candidate) async throws(UploadBudgetError) -> Evaluation {
        try await evaluate([(image, candidate)])[0]
    }
}
