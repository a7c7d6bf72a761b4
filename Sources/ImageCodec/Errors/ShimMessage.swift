import CImageCodecShim

/// The C shim's message buffers.
enum ShimMessage {
    /// A buffer for one library message: `IEC_MESSAGE_MAX` bytes, zeroed.
    static func buffer() -> [CChar] {
        [CChar](repeating: 0, count: Int(IEC_MESSAGE_MAX)) // small: IEC_MESSAGE_MAX (256) bytes
    }
}

extension Array where Element == CChar {
    /// The text of a NUL-terminated message buffer the C shim filled in, made one line: every
    /// library message reaches a CLI line, a log line or an HTTP body through here, and libheif's
    /// end in a newline (others may quote the file's own bytes). Control characters become
    /// spaces, runs of spaces one, and the ends are trimmed.
    var shimMessage: String {
        withUnsafeBufferPointer { String(decoding: $0.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
            .singleLine
    }
}

extension String {
    /// The text with control characters (C0, DEL, C1) as spaces, runs of white space folded to
    /// one, and no white space at either end.
    var singleLine: String {
        let words = unicodeScalars.split { $0.properties.generalCategory == .control || $0 == " " }
        return words.map { String(String.UnicodeScalarView($0)) }.joined(separator: " ")
    }
}

extension ImageCodecError {
    /// The error for a failed call into a library that reports a status and a message rather
    /// than by longjmp (libwebp, libheif): `variant` names what the format's unsupported case
    /// is (`.webpVariant`, `.heifVariant`).
    init(shimStatus status: iec_status, message: String, variant: (String) -> UnsupportedFormat) {
        self =
            switch status {
            case IEC_TRUNCATED: .truncatedData
            case IEC_OUT_OF_MEMORY: .outOfMemory
            case IEC_CANCELLED: .cancelled
            case IEC_UNSUPPORTED: .unsupportedFormat(variant(message))
            case IEC_LIMIT_EXCEEDED: .limitExceeded("the file passes one of the library's security limits (\(message))")
            default: .corruptData(message)
            }
    }
}
