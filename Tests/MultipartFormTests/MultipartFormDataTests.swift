import Foundation
import MultipartKit
import Testing
import TestSupport
@testable import ImageBudget

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

    static func form() -> MultipartFormData {
        var form = MultipartFormData()
        form.addText(name: "params", value: #"{"title":"Oak chair","price":42000}"#, contentType: "application/json")
        form.addText(name: "category", value: "furniture")
        form.addFile(name: "images[]", fileName: "chair-1.jpg", contentType: "image/jpeg", data: Data((0..<5000).map { UInt8($0 % 251) }))
        form.addFile(name: "images[]", fileName: "chair \"2\".png", contentType: "image/png", data: Data([0x89, 0x50, 0x4E, 0x47, 13, 10, 26, 10]))
        return form
    }

    @Test("every part reads back with its name, file name, content type and exact bytes")
    func roundTrip() throws {
        let form = Self.form()
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

    @Test("streaming to a file writes the same bytes as the in-memory body")
    func streamedToFile() throws {
        let directory = try TemporaryDirectory()
        let form = Self.form()
        let file = directory.file("body.multipart")
        try form.write(to: file)
        #expect(try Data(contentsOf: file) == form.body())
    }

    @Test("boundaries are unique per request and never occur inside a part")
    func boundaries() throws {
        #expect(MultipartFormData().boundary != MultipartFormData().boundary)
        var form = MultipartFormData(boundary: "fixed")
        form.addFile(name: "f", fileName: "a.bin", contentType: "application/octet-stream", data: Data("xx--fixedyy".utf8))
        #expect(form.boundary != "fixed")
        let parts = try Self.parse(form.body(), boundary: form.boundary)
        #expect(parts.count == 1 && parts[0].body == Array("xx--fixedyy".utf8))
    }
}
