import Foundation
import ImageCodec

/// Fits a product's photos into one upload budget with the best quality per byte.
///
/// ```swift
/// let compressor = UploadCompressor(options: UploadBudgetOptions(budget: 300_000))
/// let set = try await compressor.compress(photoURLs.map(UploadSource.file))
/// // set.totalBytes <= 300_000; set.images[i].data, .fileName, .mimeType, .score
/// ```
///
/// Each source is decoded once (DCT-scaled to display size) and reused for every attempt.
/// Outputs carry no EXIF (orientation is applied to the pixels) and no ICC profile.
/// The result is deterministic: the same inputs and options give the same bytes.
public struct UploadCompressor: Sendable {
    /// The budget and the sizes and qualities allowed.
    public var options: UploadBudgetOptions

    /// A compressor for `options` (by default the 300 KB registration budget).
    public init(options: UploadBudgetOptions = UploadBudgetOptions()) {
        self.options = options
    }

    /// Fits `sources` (1...N images) into the budget. The result lists the images in input
    /// order; their sizes add up to at most `options.budget`.
    public func compress(_ sources: [UploadSource]) async throws(UploadBudgetError) -> CompressedUploadSet {
        guard !sources.isEmpty else { throw .noImages }
        try validate()
        let images = try await prepare(sources)
        let store = EvaluationStore(
            images: images, encoding: JPEGEncodingOptions(quantization: options.quantization, encoder: options.jpegEncoder))
        let allocation = try await BudgetAllocator(options: options, store: store).allocate()
        var chosen = allocation.choice
        if options.metric == .ssimulacra2 {
            chosen = try await ChromaRefinement(options: options, store: store).refine(chosen, measured: allocation.measured)
        }
        chosen = try await FractionalQuality(options: options, store: store).fill(chosen)
        if options.keepsPNGWhenSmaller {
            chosen = try await preferPNG(chosen, store: store)
        }
        // Every output reports its SSIMULACRA2 and luma SSIM; most were measured during the
        // search already.
        chosen = try await store.scoringSSIMULACRA2(chosen.enumerated().map { (image: $0, evaluation: $1) })
        let lumaSSIM = try await store.lumaSSIM(chosen.enumerated().map { (image: $0, evaluation: $1) })
        let names = Self.outputNames(for: images.map(\.name), pngs: chosen.map { $0.candidate.quality == nil })
        let uploads = zip(zip(images, lumaSSIM), zip(chosen, names)).map { imageAndSSIM, pair in
            let (image, ssim) = imageAndSSIM
            let chroma = Self.chroma(of: pair.0, image.display)
            return CompressedUpload(
                fileName: pair.1, sourceName: image.name, sourceBytes: image.sourceBytes, data: pair.0.data,
                width: pair.0.width, height: pair.0.height, quality: pair.0.candidate.quality,
                mimeType: pair.0.candidate.quality == nil ? "image/png" : "image/jpeg", score: ssim,
                ssimulacra2: pair.0.ssimulacra2 ?? 0, chroma: chroma,
                chromaQuality: chroma == nil ? nil : pair.0.candidate.chromaQuality ?? pair.0.candidate.quality,
                qualityFraction: Double(pair.0.candidate.tenths) / 10)
        }
        return CompressedUploadSet(images: uploads, budget: options.budget, encodeCount: store.encodeCount)
    }

    private func validate() throws(UploadBudgetError) {
        guard options.budget > 0 else { throw .invalidBudget(options.budget) }
        guard options.minPixelSize > 0, options.minPixelSize <= options.maxPixelSize else {
            throw .invalidPixelSizes(minimum: options.minPixelSize, maximum: options.maxPixelSize)
        }
        guard options.qualityRange.lowerBound >= 1, options.qualityRange.upperBound <= 100 else {
            throw .invalidQualityRange(options.qualityRange)
        }
        guard options.worstDistortionSlack >= 0, options.worstDistortionSlack.isFinite else {
            throw .invalidWorstDistortionSlack(options.worstDistortionSlack)
        }
    }

    /// Decodes every source once, in parallel; results in input order. Every source that
    /// fails is reported, not just the first, so a user can fix them all at once.
    private func prepare(_ sources: [UploadSource]) async throws(UploadBudgetError) -> [PreparedImage] {
        let options = options
        let results = await concurrentResults(sources) { (source) throws(ImageCodecError) in
            try PreparedImage.prepare(source, options: options)
        }
        var images: [PreparedImage] = []
        var failures: [UploadSourceFailure] = []
        for (index, result) in results.enumerated() {
            switch result {
            case .success(let image): images.append(image)
            case .failure(let error): failures.append(UploadSourceFailure(index: index, name: sources[index].name, error: error))
            }
        }
        if !failures.isEmpty { throw .sourceFailures(failures) }
        return images
    }

    /// PNG sources keep PNG at the chosen size when that is no larger than the JPEG.
    private func preferPNG(_ chosen: [Evaluation], store: EvaluationStore) async throws(UploadBudgetError) -> [Evaluation] {
        var result = chosen
        for (index, evaluation) in chosen.enumerated() where store.images[index].sourceFormat == .png {
            let png = try await store.evaluate(image: index, Candidate(longestSide: evaluation.candidate.longestSide, quality: nil))
            if png.bytes <= evaluation.bytes { result[index] = png }
        }
        return result
    }

    /// The chroma subsampling the output's file declares: nil for PNG and for a grayscale JPEG
    /// (one component), which the encoder writes for a gray display bitmap.
    static func chroma(of evaluation: Evaluation, _ display: Bitmap) -> JPEGEncodingOptions.ChromaSubsampling? {
        guard evaluation.candidate.quality != nil, !display.format.isGray else { return nil }
        return evaluation.candidate.chroma
    }

    /// `<source name without extension>.jpg|.png`, with `-2`, `-3`, ... added to repeats: the
    /// outputs' ``CompressedUpload/fileName``s (the CLI sizes a request body's framing with them
    /// before the search).
    package static func outputNames(for sources: [String], pngs: [Bool]) -> [String] {
        var used = Set<String>()
        return zip(sources, pngs).map { source, isPNG in
            // Only the last path component: a name must never steer where a file is written.
            let stem = ((source as NSString).lastPathComponent as NSString).deletingPathExtension
                .trimmingCharacters(in: CharacterSet(charactersIn: "."))
            let base = stem.isEmpty ? "image" : stem
            let ext = isPNG ? "png" : "jpg"
            var name = "\(base).\(ext)"
            var counter = 2
            while used.contains(name.lowercased()) {
                name = "\(base)-\(counter).\(ext)"
                counter += 1
            }
            used.insert(name.lowercased())
            return name
        }
    }
}
