-- The conversations column `form` holds the chat service's flavor (ChatService.flavor): name it so.
-- RENAME COLUMN also rewrites the column's CHECK constraint.
ALTER TABLE conversations RENAME COLUMN form TO flavor;
