/// JPEG encoder settings. The defaults suit uploads and thumbnails: quality 85, optimised
/// Huffman tables (smaller files at no quality cost), 4:2:0 chroma, baseline.
public struct JPEGEncodingOptions: Sendable, Hashable {
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
    /// Quality of the chroma quantization (1...100), when it should differ from `quality`:
    /// colour-aware metrics such as SSIMULACRA2 often gain more from finer chroma than from
    /// finer luma at the same bytes, and a busy photo can give chroma bytes away cheaply.
    /// Nil: `quality`, as libjpeg does.
    public var chromaQuality: Int?
    /// Compute Huffman tables for the image instead of the standard ones: 2-6% smaller, slightly slower.
    public var optimizesHuffmanCoding: Bool
    /// Chroma resolution; 4:2:0 by default.
    public var chromaSubsampling: ChromaSubsampling
    /// Write a progressive JPEG (shown coarse-to-fine while loading; usually a little smaller).
    public var progressive: Bool
    /// Colour that transparent pixels are composited over (JPEG has no alpha).
    public var background: RGBColor
    /// Carry the source's ICC profile so colours are reproduced as in the source.
    public var preservesICCProfile: Bool
    /// The luma quantization table; `.annexK` (libjpeg's default) unless asked.
    public var quantization: JPEGQuantization

    /// Settings with the defaults above; every parameter can be changed.
    public init(
        quality: Int = 85, optimizesHuffmanCoding: Bool = true, chromaSubsampling: ChromaSubsampling = .s420,
        progressive: Bool = false, background: RGBColor = .white, preservesICCProfile: Bool = true,
        quantization: JPEGQuantization = .annexK, chromaQuality: Int? = nil
    ) {
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
/// (79) and libwebp's own effort (method 4), the balance its tools ship with: method 6 is a
/// few percent smaller at about twice the CPU, which a server rendering on demand cannot spare.
public struct WebPEncodingOptions: Sendable, Hashable {
    /// 1...100.
    public var quality: Int
    /// libwebp's effort, 0 (fastest) ... 6 (smallest).
    public var method: Int
    /// libwebp's sharp RGB→YUV conversion: crisper colour edges at some CPU; off by default.
    public var sharpYUV: Bool
    /// Write the bitmap's ICC profile into an ICCP chunk.
    public var preservesICCProfile: Bool

    /// Settings with the defaults above; every parameter can be changed.
    public init(quality: Int = 79, method: Int = 4, sharpYUV: Bool = false, preservesICCProfile: Bool = true) {
        self.quality = quality
        self.method = method
        self.sharpYUV = sharpYUV
        self.preservesICCProfile = preservesICCProfile
    }
}

/// AVIF encoder settings (AV1 through libheif's libaom encoder, 4:2:0). The defaults are
/// imgproxy's quality (63) and libaom speed 8: a 512 px thumbnail encodes in 27 ms against 45 ms
/// at libheif's default speed 6, for 2-4% more bytes, which suits a server that encodes on
/// demand (see "Formats in and out").
public struct AVIFEncodingOptions: Sendable, Hashable {
    /// 1...100.
    public var quality: Int
    /// libaom's speed, 0 (slowest, smallest) ... 9 (fastest).
    public var speed: Int
    /// Write the bitmap's ICC profile (without one the file says sRGB).
    public var preservesICCProfile: Bool

    /// Settings with the defaults above; every parameter can be changed.
    public init(quality: Int = 63, speed: Int = 8, preservesICCProfile: Bool = true) {
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
}
