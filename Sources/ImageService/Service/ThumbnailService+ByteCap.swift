import Foundation
import ImageBudget
import ImageCodec

/// Why an output could not be made under its byte cap (`mb:`).
enum ByteCapFailure: Error {
    /// The codec failed (the decode's or an encode's error).
    case codec(ImageCodecError)
    /// Even the smallest step is larger than the cap: its size in bytes.
    case unreachable(smallest: Int)
}

extension ThumbnailService {
    /// `bitmap` in `format` in at most `cap` bytes, at the best quality that fits, for an output
    /// whose encode at `quality` (`first`) was larger.
    ///
    /// JPEG goes through the upload budget's search (`UploadCompressor` with one image and the
    /// cap as its budget): qualities up to `quality`, and sizes down to half the longest side
    /// when no quality fits, chosen by SSIMULACRA2 over measured candidates — the bytes are
    /// exact, never estimated. WebP and AVIF bisect their quality (bytes grow with it); PNG has
    /// no quality to give. `metadata` is written into every candidate, so it is counted.
    static func fitted(
        _ bitmap: Bitmap, format: ProcessingOptions.OutputFormat, quality: Int, cap: Int, first: Data, metadata: ImageMetadata,
        jpegEncoder: JPEGEncodingOptions.Encoder, limits: DecodingLimits
    ) async throws(ByteCapFailure) -> Data {
        switch format {
        case .png:
            throw .unreachable(smallest: first.count)
        case .jpeg:
            // The search fits the image in what the metadata's segment leaves of the cap.
            let budget = cap - metadata.jpegSegmentBytes
            guard budget > 0 else { throw .unreachable(smallest: first.count) }
            let side = max(bitmap.width, bitmap.height)
            let options = UploadBudgetOptions(
                budget: budget, maxPixelSize: side, minPixelSize: max(1, side / 2), qualityRange: min(30, quality)...quality,
                limits: limits, jpegEncoder: jpegEncoder)
            let source: Data
            do throws(ImageCodecError) {
                source = try ImageEncoder.png(bitmap)
            } catch {
                throw .codec(error)
            }
            let fitted: Data
            do throws(UploadBudgetError) {
                fitted = try await UploadCompressor(options: options).compress([.data(source, name: "output.png")]).images[0].data
            } catch {
                switch error {
                case .budgetUnreachable(_, let smallest): throw .unreachable(smallest: smallest + metadata.jpegSegmentBytes)
                case .sourceFailures(let failures) where !failures.isEmpty: throw .codec(failures[0].error)
                default: throw .codec(.encodingFailed(error.description))
                }
            }
            do throws(ImageCodecError) {
                return try metadata.written(intoJPEG: fitted)
            } catch {
                throw .codec(error)
            }
        case .webp, .avif:
            func encode(_ quality: Int) throws(ByteCapFailure) -> Data {
                do throws(ImageCodecError) {
                    return format == .webp
                        ? try ImageEncoder.webp(bitmap, options: WebPEncodingOptions(quality: quality), metadata: metadata)
                        : try ImageEncoder.avif(bitmap, options: AVIFEncodingOptions(quality: quality), metadata: metadata)
                } catch {
                    throw .codec(error)
                }
            }
            // The highest quality below `quality` whose bytes fit: bisection keeps `low` fitting
            // (once one does) and `high` not. When none fits, `high` ends at 1, so quality 1 was
            // encoded (by the loop, or as `first`) and its size is the smallest there is.
            var (low, high) = (0, quality)
            var (best, smallest): (Data?, Int) = (nil, first.count)
            while high - low > 1 {
                let middle = (low + high) / 2
                let data = try encode(middle)
                if data.count <= cap {
                    (low, best) = (middle, data)
                } else {
                    (high, smallest) = (middle, data.count)
                }
            }
            guard let best else { throw .unreachable(smallest: smallest) }
            return best
        }
    }
}
