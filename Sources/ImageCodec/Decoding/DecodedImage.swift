/// A decoded image, with what the decoder knows about it.
public struct DecodedImage: Sendable, Equatable {
    /// The pixels, upright and at the requested size.
    public var bitmap: Bitmap
    /// The source's header (stored size, orientation, colour model, ...).
    public var header: ImageHeader
    /// What the decoder tolerated: bytes out of place that cost no pixel (padding before a
    /// marker, an unusual scan header in a baseline file, an unknown JFIF revision or Adobe
    /// transform, a bad ICC marker) and, with `allowsPartialImages`, the damage it papered over.
    public var warnings: [DecodingWarning]

    /// A decoded image, for example for a test double.
    public init(bitmap: Bitmap, header: ImageHeader, warnings: [DecodingWarning] = []) {
        self.bitmap = bitmap
        self.header = header
        self.warnings = warnings
    }
}

/// One warning a decoder tolerated.
public struct DecodingWarning: Sendable, Hashable {
    /// The library's code (libjpeg's `J_MESSAGE_CODE`; 0 when it has none).
    public var code: Int
    /// The library's message, e.g. "Corrupt JPEG data: 6 extraneous bytes before marker 0xd9".
    public var message: String

    /// A warning with the given code and message.
    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }
}
