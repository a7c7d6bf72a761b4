/// JPEG encoder settings. The defaults suit uploads and thumbnails: the perceptual encoder,
/// quality 85, optimised Huffman tables (smaller files at no quality cost), 4:2:0 chroma, baseline.
public struct JPEGEncodingOptions: Sendable, Hashable {
    /// Which encoder computes the coefficients. Both write standard JPEG (8-bit, Huffman-coded)
    /// that every decoder reads.
    public enum Encoder: String, Sendable, Hashable, CaseIterable {
        /// The engine's own: float YCbCr and DCT, quantization tables shaped for perceptual
        /// distance, and a per-block dead zone from a masking field (adaptive quantization), with
        /// libjpeg-turbo's entropy coding. Fewer bytes than libjpeg-turbo for the same
        /// SSIMULACRA2 at every quality the engine uses (see "Encoding JPEG"). Huffman tables are
        /// always optimised.
        case perceptual
        /// libjpeg-turbo's own encoder (`jpeg_write_scanlines`), byte for byte what the engine
        /// wrote before the perceptual encoder: for reproducing old outputs.
        case libjpegTurbo = "libjpeg-turbo"
    }

    /// The encoder; `.perceptual` by default.
    public var encoder: Encoder
    /// How much chroma resolution the encoder keeps.
    public enum ChromaSubsampling: String, Sendable, Hashable, CaseIterable {
        /// Chroma at half resolution in both directions: the usual choice for photos.
        case s420 = "4:2:0"
        /// Chroma at half horizontal resolution.
        case s422 = "4:2:2"
        /// Full-resolution chroma: for text and sharp colour edges.
        case s444 = "4:4:4"
    }

    /// 1...100.
    public var quality: Int
    /// A fraction of a quality step (0 ..< 1) the perceptual encoder adds to `quality` and to
    /// `chromaQuality`: its tables are continuous in quality, so a search for a byte size (the
    /// upload budget) can spend what lies between two integer qualities. 0 by default;
    /// libjpeg-turbo's integer tables ignore it.
    public var qualityFraction: Double
    /// Quality of the chroma quantization (1...100), when it should differ from `quality`:
    /// colour-aware metrics such as SSIMULACRA2 often gain more from finer chroma than from
    /// finer luma at the same bytes, and a busy photo can give chroma bytes away cheaply.
    /// Nil: `quality`, as libjpeg does.
    public var chromaQuality: Int?
    /// Compute Huffman tables for the image instead of the standard ones: 2-6% smaller, slightly
    /// slower. The perceptual encoder always does.
    public var optimizesHuffmanCoding: Bool
    /// Chroma resolution; 4:2:0 by default.
    public var chromaSubsampling: ChromaSubsampling
    /// Write a progressive JPEG (shown coarse-to-fine while loading; usually a little smaller).
    public var progressive: Bool
    /// Colour that transparent pixels are composited over (JPEG has no alpha).
    public var background: RGBColor
    /// Carry the source's ICC profile so colours are reproduced as in the source.
    public var preservesICCProfile: Bool
    /// The luma quantization table of the `.libjpegTurbo` encoder; `.annexK` (libjpeg's
    /// default) unless asked. The perceptual encoder has its own tables.
    public var quantization: JPEGQuantization

    /// Settings with the defaults above; every parameter can be changed.
    public init(
        quality: Int = 85, optimizesHuffmanCoding: Bool = true, chromaSubsampling: ChromaSubsampling = .s420,
        progressive: Bool = false, background: RGBColor = .white, preservesICCProfile: Bool = true,
        quantization: JPEGQuantization = .annexK, chromaQuality: Int? = nil, encoder: Encoder = .perceptual,
        qualityFraction: Double = 0
    ) {
        self.encoder = encoder
        self.qualityFraction = qualityFraction
        self.quality = quality
        self.chromaQuality = chromaQuality
        self.optimizesHuffmanCoding = optimizesHuffmanCoding
        self.chromaSubsampling = chromaSubsampling
        self.progressive = progressive
        self.background = background
        self.preservesICCProfile = preservesICCProfile
        self.quantization = quantization
    }
}

/// PNG encoder settings.
public struct PNGEncodingOptions: Sendable, Hashable {
    /// zlib level 0...9; 6 is zlib's own balance of size and speed.
    public var compressionLevel: Int
    /// Write the bitmap's ICC profile into an iCCP chunk (one libpng distrusts is dropped).
    public var preservesICCProfile: Bool

    /// Settings with zlib level 6, keeping the bitmap's profile.
    public init(compressionLevel: Int = 6, preservesICCProfile: Bool = true) {
        self.compressionLevel = compressionLevel
        self.preservesICCProfile = preservesICCProfile
    }
}

/// WebP encoder settings: lossy, alpha kept (losslessly). The defaults are imgproxy's quality
/// (79) and libwebp's highest effort (method 6): at the SSIMULACRA2 of the engine's JPEG q80,
/// 512 px thumbnails of photos outside the repository took 0.84× JPEG's bytes at method 4 and
/// 0.77× at method 6, for 24 ms of encoding against 11 ms. A thumbnail service encodes each
/// result once and sends it many times, so the bytes win (see "Formats in and out").
public struct WebPEncodingOptions: Sendable, Hashable {
    /// 1...100.
    public var quality: Int
    /// libwebp's effort, 0 (fastest) ... 6 (smallest).
    public var method: Int
    /// libwebp's effort for each frame of an animated WebP (``WebPAnimationWriter``), 0 ... 6.
    /// 4 (libwebp's and libvips' default) by default: an animation pays the effort once per
    /// frame, and method 6 took 3.3× the wall of method 4 on 50-frame 480×270 GIFs made 240 px
    /// for 2.5 % fewer bytes (see "GIF and animated WebP").
    public var animationMethod: Int
    /// libwebp's sharp RGB→YUV conversion: crisper saturated colour edges for about 1.3× the
    /// encode time. Off by default: on photos it moved the bytes at equal SSIMULACRA2 by ±3%.
    public var sharpYUV: Bool
    /// Write the bitmap's ICC profile into an ICCP chunk.
    public var preservesICCProfile: Bool

    /// Settings with the defaults above; every parameter can be changed.
    public init(
        quality: Int = 79, method: Int = 6, animationMethod: Int = 4, sharpYUV: Bool = false, preservesICCProfile: Bool = true
    ) {
        self.quality = quality
        self.method = method
        self.animationMethod = animationMethod
        self.sharpYUV = sharpYUV
        self.preservesICCProfile = preservesICCProfile
    }
}

/// AVIF encoder settings (AV1 through libavif and libaom, 4:2:0, which AV1's Main profile and so
/// every hardware decoder reads). The defaults are imgproxy's quality (63) and libaom speed 6: at the SSIMULACRA2 of the engine's JPEG q80, 512 px thumbnails of
/// photos outside the repository took 0.73× JPEG's bytes at speed 8 and 0.62× at speed 6, for
/// about 35 ms of encoding against 21 ms (at one quality, speed 8 is only 2-4% larger, but it
/// also scores lower). Encoded once and sent many times, a thumbnail is worth the time (see
/// "Formats in and out").
public struct AVIFEncodingOptions: Sendable, Hashable {
    /// 1...100.
    public var quality: Int
    /// libaom's speed, 0 (slowest, smallest) ... 9 (fastest).
    public var speed: Int
    /// Write the bitmap's ICC profile (without one the file says sRGB).
    public var preservesICCProfile: Bool

    /// Settings with the defaults above; every parameter can be changed.
    public init(quality: Int = 63, speed: Int = 6, preservesICCProfile: Bool = true) {
        self.quality = quality
        self.speed = speed
        self.preservesICCProfile = preservesICCProfile
    }
}

/// An opaque 8-bit sRGB colour.
public struct RGBColor: Sendable, Hashable {
    /// Red, 0...255.
    public var red: UInt8
    /// Green, 0...255.
    public var green: UInt8
    /// Blue, 0...255.
    public var blue: UInt8

    /// A colour from its three channels.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// Opaque white, the default background for JPEG.
    public static let white = RGBColor(red: 255, green: 255, blue: 255)
    /// Opaque black.
    public static let black = RGBColor(red: 0, green: 0, blue: 0)

    /// A colour from six hex digits, `RRGGBB` (a leading `#` allowed, either case); nil for
    /// anything else.
    public init?(hex: String) {
        let digits = hex.hasPrefix("#") ? hex.dropFirst() : Substring(hex)
        guard digits.count == 6, digits.allSatisfy(\.isHexDigit), let value = UInt32(digits, radix: 16) else { return nil }
        self.init(red: UInt8(value >> 16), green: UInt8((value >> 8) & 0xFF), blue: UInt8(value & 0xFF))
    }

    /// `RRGGBB`, lowercase.
    public var hex: String {
        [red, green, blue].map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
