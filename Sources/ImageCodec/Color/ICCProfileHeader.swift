/// The few fields of an ICC profile's 128-byte header the codec needs (ICC.1:2022 §7.2).
struct ICCProfileHeader: Sendable, Hashable {
    enum ColorSpace: Sendable, Hashable {
        case rgb, gray, cmyk, other
    }

    /// The data colour space (bytes 16-19: "RGB ", "GRAY", "CMYK", ...).
    let colorSpace: ColorSpace

    /// nil when the bytes are too short or do not carry the "acsp" signature.
    init?(_ profile: [UInt8]?) {
        guard let profile, profile.count >= 128, Array(profile[36..<40]) == Array("acsp".utf8) else { return nil }
        colorSpace =
            switch String(decoding: profile[16..<20], as: UTF8.self) {
            case "RGB ": .rgb
            case "GRAY": .gray
            case "CMYK": .cmyk
            default: .other
            }
    }
}
