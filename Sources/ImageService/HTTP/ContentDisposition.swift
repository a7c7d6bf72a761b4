import Foundation

/// `Content-Disposition` (RFC 6266): a quoted ASCII `filename` every client reads, and the
/// exact name as `filename*` (RFC 8187, UTF-8, percent-encoded) when it is not plain ASCII.
enum ContentDisposition {
    static func value(attachment: Bool, filename: String) -> String {
        // The quoted form keeps printable ASCII but the quote and the backslash; anything else
        // becomes `_`, so a name can never break out of the header.
        let fallback = String(
            filename.unicodeScalars.map { scalar in
                scalar.isASCII && scalar.value >= 0x20 && scalar.value < 0x7F && scalar != "\"" && scalar != "\\" ? Character(scalar) : "_"
            })
        var value = "\(attachment ? "attachment" : "inline"); filename=\"\(fallback)\""
        if fallback != filename {
            // RFC 8187's attr-char: ALPHA, DIGIT and !#$&+-.^_`|~; every other byte is %XX.
            let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$&+-.^_`|~")
            value += "; filename*=UTF-8''" + (filename.addingPercentEncoding(withAllowedCharacters: allowed) ?? fallback)
        }
        return value
    }
}
