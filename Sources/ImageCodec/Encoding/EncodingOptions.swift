/// JPEG encoder settings. The defaults suit uploads and thumbnails: quality 85, optimised
/// Huffman tables (smaller files at no quality cost), 4:2:0 chroma, baseline.
public struct JPEGEncodingOptions: Sendable, Hashable {
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
    public var optimizesHuffmanCoding: Bool
    public var chromaSubsampling: ChromaSubsampling
    public var progressive: Bool
    /// Colour that transparent pixels are composited over (JPEG has no alpha).
    public var background: RGBColor
    /// Carry the source's ICC profile so colours are reproduced as in the source.
    public var preservesICCProfile: Bool
    /// The luma quantization table; `.annexK` (libjpeg's default) unless asked.
    public var quantization: JPEGQuantization

    public init(quality: Int = 85, optimizesHuffmanCoding: Bool = true, chromaSubsampling: ChromaSubsampling = .s420,
                progressive: Bool = false, background: RGBColor = .white, preservesICCProfile: Bool = true,
                quantization: JPEGQuantization = .annexK) {
        self.quality = quality
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
    public var preservesICCProfile: Bool

    public init(compressionLevel: Int = 6, preservesICCProfile: Bool = true) {
        self.compressionLevel = compressionLevel
        self.preservesICCProfile = preservesICCProfile
    }
}

/// An opaque 8-bit sRGB colour.
public struct RGBColor: Sendable, Hashable {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    public static let white = RGBColor(red: 255, green: 255, blue: 255)
    public static let black = RGBColor(red: 0, green: 0, blue: 0)
}
