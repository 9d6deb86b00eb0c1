# The answer stage's parts that need no store: sentences, the extractive answer,
# citations, and the chat-completions client.
add_library(eagle_answer ${CMAKE_SOURCE_DIR}/src/eagle/answer/sentences.cpp ${CMAKE_SOURCE_DIR}/src/eagle/answer/extractive.cpp
            ${CMAKE_SOURCE_DIR}/src/eagle/answer/citations.cpp ${CMAKE_SOURCE_DIR}/src/eagle/answer/chat_client.cpp
            ${CMAKE_SOURCE_DIR}/src/eagle/answer/evidence.cpp)
target_link_libraries(eagle_answer PUBLIC eagle_core nlohmann_json::nlohmann_json PRIVATE eagle_encode PkgConfig::HTTPLIB)
