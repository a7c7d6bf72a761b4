import CImageCodecShim

extension Array where Element == CChar {
    /// The text of a NUL-terminated message buffer the C shim filled in.
    var shimMessage: String {
        withUnsafeBufferPointer { String(decoding: $0.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
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
            case IEC_UNSUPPORTED: .unsupportedFormat(variant(message))
            case IEC_LIMIT_EXCEEDED: .limitExceeded("the file passes one of the library's security limits (\(message))")
            default: .corruptData(message)
            }
    }
}
