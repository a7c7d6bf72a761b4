import Foundation
import ImageCodec

/// A source decoded once, at display size, and everything the search reuses from it.
struct PreparedImage: Sendable {
    var name: String
    var sourceBytes: Int
    var sourceFormat: ImageFormat
    /// Upright, longest side at most `maxPixelSize` (DCT-scaled decode + Lanczos).
    var display: Bitmap
    /// Luma of `display` with its windowed statistics: what every candidate is scored against.
    var reference: StructuralSimilarity.Reference

    static func prepare(_ source: UploadSource, options: UploadBudgetOptions) throws(ImageCodecError) -> PreparedImage {
        let data: Data
        switch source {
        case .file(let url): data = try FileBytes.read(url, maximumSize: options.limits.maxFileSize)
        case .data(let bytes, _): data = bytes
        }
        let format = try ImageFormat.sniff(data)
        let decoder = ImageDecoder(options: DecodingOptions(maxPixelSize: options.maxPixelSize, limits: options.limits))
        let display = try decoder.decode(data)
        return PreparedImage(
            name: source.name, sourceBytes: data.count, sourceFormat: format, display: display,
            reference: StructuralSimilarity.Reference(try LumaPlane(display)))
    }

    /// The display bitmap shrunk so its longest side is `longestSide` (never enlarged).
    func scaled(to longestSide: Int) throws(ImageCodecError) -> Bitmap {
        try display.downsampled(maxPixelSize: longestSide)
    }
}

/// An encoded candidate and its scores.
struct Evaluation: Sendable {
    var candidate: Candidate
    var data: Data
    var width: Int
    var height: Int
    /// Luma SSIM at display size: measured for every candidate of the SSIM search and wherever
    /// a floor or the result needs it; nil where nothing reads it (the SSIMULACRA2 stage with
    /// the perceptual encoder, which keeps no SSIM floor). It costs a decode and a score.
    var ssim: Double?
    /// SSIMULACRA2 at display size, once measured (only for the candidates that need it: it
    /// costs about ten times as much as SSIM).
    var ssimulacra2: Double?

    var bytes: Int { data.count }

    /// Whether the luma SSIM reaches `floor`; an unmeasured one only when there is no floor.
    func reaches(ssim floor: Double) -> Bool {
        ssim.map { $0 >= floor } ?? (floor == -.infinity)
    }
}

extension PreparedImage {
    /// Encodes the candidate from `bitmap` (the display bitmap at the candidate's size) and,
    /// with `measuringSSIM`, decodes it back, brings it to display size and scores it.
    /// `encoding` gives the encoder and luma table; the candidate, everything else.
    func evaluate(
        _ candidate: Candidate, from bitmap: Bitmap, encoding: JPEGEncodingOptions, measuringSSIM: Bool
    ) throws(ImageCodecError) -> Evaluation {
        let data: Data
        if let quality = candidate.quality {
            // No ICC profile: uploads are viewed as sRGB, and profiles cost bytes.
            // Progressive: 5-10% smaller than baseline at the same quality, which the budget turns into quality.
            data = try ImageEncoder.jpeg(
                bitmap,
                options: JPEGEncodingOptions(
                    quality: quality, chromaSubsampling: candidate.chroma, progressive: true,
                    preservesICCProfile: false, quantization: encoding.quantization,
                    chromaQuality: candidate.chromaQuality, encoder: encoding.encoder, qualityFraction: Double(candidate.tenths) / 10))
        } else {
            data = try ImageEncoder.png(bitmap, options: PNGEncodingOptions(compressionLevel: 9, preservesICCProfile: false))
        }
        return Evaluation(
            candidate: candidate, data: data, width: bitmap.width, height: bitmap.height,
            ssim: measuringSSIM ? try ssim(of: data) : nil)
    }

    /// The luma SSIM of an encoded candidate at display size.
    func ssim(of data: Data) throws(ImageCodecError) -> Double {
        // Luma is all SSIM looks at; for a JPEG, libjpeg then skips chroma entirely.
        let decoded = try atDisplaySize(ImageDecoder(options: DecodingOptions(grayscale: true)).decode(data))
        return StructuralSimilarity.score(reference, try LumaPlane(decoded))
    }

    /// The SSIMULACRA2 of an encoded candidate: decoded in colour, brought to display size and
    /// scored against `reference` (made from `display`).
    func ssimulacra2(of data: Data, reference: SSIMULACRA2.Reference) throws(ImageCodecError) -> Double {
        try SSIMULACRA2.score(reference, atDisplaySize(ImageDecoder().decode(data)))
    }

    /// `decoded` resampled (Lanczos) to the display size, the size every score is taken at.
    private func atDisplaySize(_ decoded: Bitmap) throws(ImageCodecError) -> Bitmap {
        guard decoded.width != display.width || decoded.height != display.height else { return decoded }
        return try decoded.resampled(width: display.width, height: display.height)
    }
}
