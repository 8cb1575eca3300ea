-- The conversations column `form` holds the chat service's flavor (ChatService.flavor): name it so.
ALTER TABLE conversations RENAME COLUMN form TO flavor;
