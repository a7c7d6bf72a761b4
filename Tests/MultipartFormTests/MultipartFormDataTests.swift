import Foundation
import MultipartKit
import Testing
import TestSupport
import MultipartForm

@Suite("Multipart request body")
struct MultipartFormDataTests {
    struct ParsedPart: Equatable {
        var headers: [String: String] = [:]
        var body: [UInt8] = []
    }

    /// Parses a body with vapor/multipart-kit, an independent implementation.
    static func parse(_ body: Data, boundary: String) throws -> [ParsedPart] {
        let parser = MultipartParser(boundary: boundary)
        var parts: [ParsedPart] = []
        var current = ParsedPart()
        parser.onHeader = { name, value in current.headers[name.lowercased()] = value }
        parser.onBody = { buffer in current.body += buffer.readBytes(length: buffer.readableBytes) ?? [] }
        parser.onPartComplete = {
            parts.append(current)
            current = ParsedPart()
        }
        try parser.execute([UInt8](body))
        return parts
    }

    static func form() throws -> MultipartFormData {
        var form = MultipartFormData()
        try form.addText(name: "params", value: #"{"title":"Oak chair","price":42000}"#, contentType: "application/json")
        try form.addText(name: "category", value: "furniture")
        try form.addFile(name: "images[]", fileName: "chair-1.jpg", contentType: "image/jpeg", data: Data((0..<5000).map { UInt8($0 % 251) }))
        try form.addFile(
            name: "images[]", fileName: "chair \"2\".png", contentType: "image/png", data: Data([0x89, 0x50, 0x4E, 0x47, 13, 10, 26, 10]))
        return form
    }

    @Test("every part reads back with its name, file name, content type and exact bytes")
    func roundTrip() throws {
        let form = try Self.form()
        #expect(form.contentType == "multipart/form-data; boundary=\(form.boundary)")
        let parts = try Self.parse(form.body(), boundary: form.boundary)
        try #require(parts.count == 4)
        #expect(parts[0].headers["content-disposition"] == #"form-data; name="params""#)
        #expect(parts[0].headers["content-type"] == "application/json")
        #expect(String(decoding: parts[0].body, as: UTF8.self) == #"{"title":"Oak chair","price":42000}"#)
        #expect(parts[1].headers["content-disposition"] == #"form-data; name="category""#)
        #expect(parts[1].headers["content-type"] == nil && parts[1].body == Array("furniture".utf8))
        #expect(parts[2].headers["content-disposition"] == #"form-data; name="images[]"; filename="chair-1.jpg""#)
        #expect(parts[2].headers["content-type"] == "image/jpeg")
        #expect(parts[2].body == (0..<5000).map { UInt8($0 % 251) })
        #expect(parts[3].headers["content-disposition"] == #"form-data; name="images[]"; filename="chair %222%22.png""#)
        #expect(parts[3].body == [0x89, 0x50, 0x4E, 0x47, 13, 10, 26, 10])
    }

    @Test("streaming to a file writes the same bytes as the in-memory body, and nothing else")
    func streamedToFile() throws {
        let directory = try TemporaryDirectory()
        let form = try Self.form()
        let file = directory.file("body.multipart")
        try form.write(to: file)
        #expect(try Data(contentsOf: file) == form.body())
        // The temporary file it was written under is gone.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["body.multipart"])
    }

    @Test("a failed write names the file and its errno, and leaves nothing behind")
    func failedWrite() throws {
        let directory = try TemporaryDirectory()
        let form = try Self.form()
        #expect(throws: MultipartFormDataError.io(path: directory.file("missing/body").path, errno: ENOENT)) {
            try form.write(to: directory.file("missing/body"))
        }
        // Renaming onto a directory fails after the body was written: the temporary file goes.
        try FileManager.default.createDirectory(at: directory.file("taken"), withIntermediateDirectories: false)
        try Data("x".utf8).write(to: directory.file("taken/x"))
        #expect(throws: MultipartFormDataError.io(path: directory.file("taken").path, errno: EISDIR)) {
            try form.write(to: directory.file("taken"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["taken"])
    }

    @Test("the boundary is random per form, fixed once chosen, and refused when a part contains it")
    func boundaries() throws {
        #expect(MultipartFormData().boundary != MultipartFormData().boundary)
        var form = try MultipartFormData(boundary: "fixed")
        let header = form.contentType
        try form.addText(name: "a", value: "xx-fixed") // "-fixed" is not "--fixed"
        #expect(throws: MultipartFormDataError.boundaryInPart(name: "f")) {
            try form.addFile(name: "f", fileName: "a.bin", contentType: "application/octet-stream", data: Data("xx--fixedyy".utf8))
        }
        #expect(form.boundary == "fixed" && form.contentType == header && form.parts.count == 1)
        let parts = try Self.parse(form.body(), boundary: "fixed")
        #expect(parts.count == 1 && parts[0].body == Array("xx-fixed".utf8))
    }

    @Test("boundaries outside RFC 2046 and content types that could inject headers are refused")
    func invalidInputs() throws {
        for boundary in ["", String(repeating: "a", count: 71), "ends in space ", "quote\"", "new\r\nline", "é"] {
            #expect(throws: MultipartFormDataError.invalidBoundary(boundary)) { try MultipartFormData(boundary: boundary) }
        }
        #expect(try MultipartFormData(boundary: String(repeating: "a", count: 70)).boundary.count == 70)
        var form = MultipartFormData()
        for type in ["", "image/jpeg\r\nX-Injected: 1", "text/plain; charset=ü"] {
            #expect(throws: MultipartFormDataError.invalidContentType(type)) { try form.addText(name: "t", value: "v", contentType: type) }
        }
        #expect(form.parts.isEmpty)
    }
}
