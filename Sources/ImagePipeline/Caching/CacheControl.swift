/// `Cache-Control` as RFC 9111 §5.2 writes it: comma-separated directives, each a token with an
/// optional `=token` or `="quoted string"` argument.
enum CacheControl {
    /// Directives by lowercased name, arguments unquoted; a comma inside quotes belongs to the
    /// argument (`no-cache="set-cookie, x-id"` is one directive). The first occurrence of a
    /// name wins.
    static func directives(_ value: String?) -> [String: String?] {
        guard let value else { return [:] }
        var directives: [String: String?] = [:]
        var characters = Substring(value)
        while !characters.isEmpty {
            characters = characters.drop { $0 == " " || $0 == "\t" || $0 == "," }
            let name = characters.prefix { $0 != "=" && $0 != "," }
            characters = characters.dropFirst(name.count)
            var argument: String?
            if characters.first == "=" {
                characters = characters.dropFirst()
                if characters.first == "\"" {
                    (argument, characters) = quoted(characters.dropFirst())
                } else {
                    let token = characters.prefix { $0 != "," }
                    characters = characters.dropFirst(token.count)
                    argument = token.trimmingSpaces
                }
            }
            let key = name.trimmingSpaces.lowercased()
            if !key.isEmpty, directives[key] == nil { directives[key] = .some(argument) }
            characters = characters.drop { $0 != "," }
        }
        return directives
    }

    /// RFC 9111 §1.2.2 delta-seconds: digits only (no sign, point, exponent or "inf"); a value
    /// beyond 2^31 counts as 2^31. nil for anything that is not digits.
    static func deltaSeconds(_ text: String?) -> Int? {
        guard let text = text?.trimmingSpaces, !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let limit = 1 << 31
        // Beyond ten digits the value is over the limit whatever they are; Int would overflow.
        guard text.count <= 10, let value = Int(text) else { return limit }
        return min(value, limit)
    }

    /// A quoted string's content (after the opening quote), `\` escapes resolved, and what
    /// follows its closing quote.
    private static func quoted(_ characters: Substring) -> (String, Substring) {
        var result = ""
        var rest = characters
        while let character = rest.first {
            rest = rest.dropFirst()
            if character == "\"" { break }
            if character == "\\", let escaped = rest.first {
                result.append(escaped)
                rest = rest.dropFirst()
            } else {
                result.append(character)
            }
        }
        return (result, rest)
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
