import Foundation

/// A `multipart/form-data` request body (RFC 7578): text parts such as a JSON `params` part,
/// and file parts with a file name and content type.
///
/// ```swift
/// var form = MultipartFormData()
/// form.addText(name: "params", value: #"{"title":"Chair"}"#, contentType: "application/json")
/// for image in set.images {
///     form.addFile(name: "images[]", fileName: image.fileName, contentType: image.mimeType, data: image.data)
/// }
/// request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
/// request.httpBody = form.body()          // or: try form.write(to: fileURL) for upload(fromFile:)
/// ```
public struct MultipartFormData: Sendable {
    /// One part: a text field (no file name) or a file.
    public struct Part: Sendable, Hashable {
        public var name: String
        public var fileName: String?
        public var contentType: String?
        public var data: Data
    }

    /// Unique per request: random, and checked not to occur in any part.
    public private(set) var boundary: String
    public private(set) var parts: [Part] = []

    /// `boundary`: for reproducible bodies in tests; by default a random one per request.
    public init(boundary: String? = nil) {
        self.boundary = boundary ?? Self.randomBoundary()
    }

    /// The `Content-Type` header value for the request.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    public mutating func addText(name: String, value: String, contentType: String? = nil) {
        add(Part(name: name, fileName: nil, contentType: contentType, data: Data(value.utf8)))
    }

    public mutating func addFile(name: String, fileName: String, contentType: String, data: Data) {
        add(Part(name: name, fileName: fileName, contentType: contentType, data: data))
    }

    private mutating func add(_ part: Part) {
        parts.append(part)
        // A boundary that occurs inside a part would cut it short: pick another.
        while part.data.range(of: Data(("--" + boundary).utf8)) != nil { boundary = Self.randomBoundary() }
    }

    /// The whole body in memory.
    public func body() -> Data {
        var body = Data()
        for part in parts {
            body.append(Data(header(for: part).utf8))
            body.append(part.data)
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        return body
    }

    /// Streams the body to a file part by part, for uploads from a file.
    public func write(to url: URL) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.truncate(atOffset: 0)
        for part in parts {
            try handle.write(contentsOf: Data(header(for: part).utf8))
            try handle.write(contentsOf: part.data)
            try handle.write(contentsOf: Data("\r\n".utf8))
        }
        try handle.write(contentsOf: Data("--\(boundary)--\r\n".utf8))
    }

    private func header(for part: Part) -> String {
        var disposition = "form-data; name=\"\(Self.quoted(part.name))\""
        if let fileName = part.fileName { disposition += "; filename=\"\(Self.quoted(fileName))\"" }
        var header = "--\(boundary)\r\nContent-Disposition: \(disposition)\r\n"
        if let contentType = part.contentType { header += "Content-Type: \(contentType)\r\n" }
        return header + "\r\n"
    }

    /// Escapes what would end the quoted string or the header line (RFC 7578 §4.2 leaves
    /// percent-encoding of `"` and CR/LF as the interoperable choice).
    private static func quoted(_ value: String) -> String {
        value.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }

    private static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return "image-engine-" + String((0..<24).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }
}
