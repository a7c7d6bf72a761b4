import URLSigning
import Foundation
import ImageCodec

/// The request path opened to the fuzz targets in `Fuzz/` (`@_spi(Fuzzing) import
/// ImageService`): not API, and absent from the documentation.
@_spi(Fuzzing)
public enum ServiceFuzzing {
    /// A small JPEG whose header the plans are made from (a plan needs no pixels). Made per
    /// input, not kept in a global: LeakSanitizer reported the lazily made global's bytes at
    /// exit, which ended every campaign.
    private static func source() -> ImageSource? {
        guard let bitmap = try? Bitmap(width: 16, height: 16, format: .rgb, pixels: [UInt8](repeating: 128, count: 16 * 16 * 3)), // small: 16 × 16
            let jpeg = try? ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: 80))
        else { return nil }
        return try? ImageSource(data: jpeg)
    }

    private static let key = SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")

    /// One request path, as `serve` takes it apart: the bytes are the path (and, after a NUL, an
    /// `Accept` value); a path with a dot segment stops there, as `serve` refuses it first;
    /// the rest is tried unsigned (`--unsafe`) and, re-signed, under a key, then
    /// every job that parses is planned for sources of several shapes, keyed, and given its
    /// cache lifetime. Anything but a `ServiceError` or a sound job — a trap, an overflow — is
    /// a finding.
    public static func request(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        let parts = text.split(separator: "\0", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(parts[0])
        let accept = parts.count > 1 ? String(parts[1]) : nil
        // What the service refuses before anything else: a path caches in front would rewrite.
        if URLSigner.dotSegment(in: path) != nil { return }
        guard let key else { return }
        var unsafe = ThumbnailService.Configuration(keys: [], requiresSignature: false)
        unsafe.autoWebP = true
        unsafe.autoAVIF = true
        let signer = URLSigner(keys: [key])
        var requests = [(ServiceRequest(path: path, accept: accept), unsafe, URLSigner(keys: []))]
        // Re-signed, so the parsing behind the signature check is reached under a key too.
        if let slash = path.dropFirst().firstIndex(of: "/"), let signed = signer.sign(String(path[slash...])) {
            requests.append((ServiceRequest(path: signed, query: "q", accept: accept), ThumbnailService.Configuration(keys: [key]), signer))
        }
        let source = source()
        for (request, configuration, signer) in requests {
            guard let job = try? ProcessingJob(request, configuration: configuration, signer: signer) else { continue }
            for (width, height) in [(16, 16), (1, 65_535), (65_535, 1), (100_000, 2_500)] {
                let resize = job.resize(sourceWidth: width, sourceHeight: height)
                if let resize, let source {
                    _ = try? source.plan(DecodingOptions(resize: resize))
                }
            }
            for format in job.candidateFormats { _ = job.resultKey(format) }
            _ = CacheLifetime(timeToLive: configuration.timeToLive, urlExpiry: job.options.expires).headers
        }
    }
}
