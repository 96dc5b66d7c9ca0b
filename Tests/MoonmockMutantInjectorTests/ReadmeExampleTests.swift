// MutantInjector's README "Complete Test Example", with only the import changed
// (`import MutantInjector` → `import MoonmockMutantInjector`); `UserService` is the app code
// the README assumes, written here.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockMutantInjector
import XCTest

struct User: Decodable { let id: Int; let name: String }

struct UserService {
    func fetchUsers(completion: @escaping @Sendable (Result<[User], Error>) -> Void) {
        struct Page: Decodable { let users: [User] }
        URLSession.shared.dataTask(with: URL(string: "https://api.example.com/users")!) { data, _, error in
            if let error { return completion(.failure(error)) }
            completion(Result { try JSONDecoder().decode(Page.self, from: data ?? Data()).users })
        }.resume()
    }
}

class NetworkTests: XCTestCase {

    override func setUp() {
        super.setUp()
        MutantInjector.setupGlobalInterceptor()
    }

    override func tearDown() {
        MutantInjector.tearDownGlobalInterceptor()
        super.tearDown()
    }

    func testUserFetch() throws {
        // Setup expectations
        let expectation = XCTestExpectation(description: "Fetch users")

        // Register mock response
        MutantInjector.addMockResponse(
            for: "https://api.example.com/users",
            statusCode: 200,
            jsonFilename: "users_success"
        )

        // Execute the code that makes the network request
        let userService = UserService()
        userService.fetchUsers { result in
            switch result {
            case .success(let users):
                XCTAssertEqual(users.count, 1)
                XCTAssertEqual(users.first?.name, "John Doe")
            case .failure(let error):
                XCTFail("Expected success but got error: \(error)")
            }
            expectation.fulfill()
        }

        // Wait for the expectation to be fulfilled
        wait(for: [expectation], timeout: 1.0)
    }
}
